import { createHash } from "node:crypto";
import {
  CloudWatchLogsClient,
  CreateLogGroupCommand,
  DeleteLogGroupCommand,
  DescribeLogGroupsCommand,
  PutRetentionPolicyCommand,
} from "@aws-sdk/client-cloudwatch-logs";
import {
  CreateRoleCommand,
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  GetRoleCommand,
  IAMClient,
  PutRolePolicyCommand,
} from "@aws-sdk/client-iam";
import {
  CreateFunctionCommand,
  DeleteFunctionCommand,
  GetFunctionCommand,
  InvokeWithResponseStreamCommand,
  LambdaClient,
  ListFunctionsCommand,
  ListVersionsByFunctionCommand,
  PublishVersionCommand,
  PutFunctionConcurrencyCommand,
  PutFunctionEventInvokeConfigCommand,
  UpdateFunctionCodeCommand,
  UpdateFunctionConfigurationCommand,
  waitUntilFunctionActiveV2,
  waitUntilFunctionUpdatedV2,
} from "@aws-sdk/client-lambda";
import { afterAll, describe, expect, it } from "vitest";
import {
  runtimeBoundary,
  runtimePolicy,
  runtimeRoleInput,
  runtimeTrustPolicy,
} from "../../../shared/containment/runtime-policy.ts";
import { outcomeLine as outcome, REGION, signedEmulator } from "../../../test/helpers/signed-emulator.ts";
import { localResourceArns, platformPrincipals } from "../platform-roles.ts";
import { localRuntimeScope } from "../policy-proxy/credentials.ts";
import type { ProxyPrincipal } from "../policy-proxy/handler.ts";
import { LOCAL_ACCOUNT } from "../policy-proxy/local-tables.ts";
import { LocalIam } from "./iam.ts";
import { LambdaFunctions } from "./lambda-functions.ts";
import { LocalLogs } from "./logs.ts";

// The control plane the deploy step calls (Lambda's functions, IAM's roles, CloudWatch Logs' groups), served by the
// local cloud's emulator behind the policy proxy: the real AWS SDK v3 clients, signed as the deploy role, get what
// its generated policy (infra/policies/roles.ts) allows and AWS's refusals for the rest.
const arns = localResourceArns(REGION);
const BOUNDARY = arns.runtimeBoundary();
const LAYER = arns.runtimeLayer();
const scope = localRuntimeScope("t1", "d1");
const roles = platformPrincipals(undefined, REGION);
let who: ProxyPrincipal = roles.get("deploy")!;
const objects = new Map<string, Buffer>([
  ["runtimes/t1/d1/r1.zip", Buffer.from("zip one")],
  ["runtimes/t1/d1/r2.zip", Buffer.from("zip two")],
]);
let release: () => void = () => {};
const held = new Promise<void>((r) => {
  release = r;
});
const iam = new LocalIam({ account: LOCAL_ACCOUNT, managedPolicies: { [BOUNDARY]: runtimeBoundary(scope) } });
const functions = new LambdaFunctions({
  region: REGION,
  account: LOCAL_ACCOUNT,
  accountConcurrency: 1000,
  layers: [LAYER],
  roleAssumable: (arn) => iam.roleOfArn(arn) !== undefined,
  codeObject: async ({ S3Key }) => {
    const body = objects.get(S3Key);
    return body && { size: body.length, sha256: createHash("sha256").update(body).digest("base64") };
  },
});
const services = {
  iam,
  functions,
  logs: new LocalLogs({ region: REGION, account: LOCAL_ACCOUNT }),
  // A stream that lasts until the test lets it end: the invocations in flight count toward the reservation.
  streaming: (name: string) =>
    name.startsWith("agent-rt-")
      ? (async function* () {
          yield Buffer.from("started");
          await held;
          yield Buffer.from("done");
        })()
      : undefined,
};
const aws = signedEmulator(services, {
  principal: (id) => (id === who.accessKeyId ? who : undefined),
  iamRole: (name) => {
    const r = iam.role(name);
    return r && { arn: r.Arn, ...(r.PermissionsBoundary ? { boundary: r.PermissionsBoundary } : {}) };
  },
});
afterAll(() => release());

const client = () => aws.client(who);
const roleInput = runtimeRoleInput(scope, BOUNDARY);
const roleArn = `arn:aws:iam::${LOCAL_ACCOUNT}:role/agent-runtime/agent-rt-d1`;
const fn = {
  FunctionName: "agent-rt-d1",
  Role: roleArn,
  Runtime: "nodejs22.x" as const,
  Handler: "index.handler",
  Code: { S3Bucket: "artifacts", S3Key: "runtimes/t1/d1/r1.zip" },
  Layers: [LAYER],
  Environment: { Variables: { AGENT_RUNTIME_CONFIG: "{}" } },
  Timeout: 900,
  MemorySize: 1024,
  Architectures: ["arm64" as const],
};

describe("IAM under the deploy role's policy", () => {
  it("GetRole of a missing runtime role is NoSuchEntity (the path-less ARN is granted), not AccessDenied", async () => {
    const err = await new IAMClient(client())
      .send(new GetRoleCommand({ RoleName: "agent-rt-d1" }))
      .catch((e) => e);
    expect(err.name).toBe("NoSuchEntityException");
    expect(err.$metadata.httpStatusCode).toBe(404);
  });

  it("CreateRole only under /agent-runtime/ with the runtime boundary", async () => {
    const client_ = new IAMClient(client());
    const { PermissionsBoundary: _b, ...noBoundary } = roleInput;
    expect(await outcome(client_.send(new CreateRoleCommand(noBoundary)))).toBe("AccessDenied 403");
    expect(await outcome(client_.send(new CreateRoleCommand({ ...roleInput, Path: "/" })))).toBe(
      "AccessDenied 403",
    );
    const other = `arn:aws:iam::${LOCAL_ACCOUNT}:policy/other`;
    expect(
      await outcome(client_.send(new CreateRoleCommand({ ...roleInput, PermissionsBoundary: other }))),
    ).toBe("AccessDenied 403");
    const { Role } = await client_.send(new CreateRoleCommand(roleInput));
    expect(Role?.Arn).toBe(roleArn);
    expect(await outcome(client_.send(new CreateRoleCommand(roleInput)))).toBe(
      "EntityAlreadyExistsException 409",
    );
    const got = (await client_.send(new GetRoleCommand({ RoleName: "agent-rt-d1" }))).Role!;
    expect(got.Path).toBe("/agent-runtime/");
    expect(got.PermissionsBoundary?.PermissionsBoundaryArn).toBe(BOUNDARY);
    expect(JSON.parse(decodeURIComponent(got.AssumeRolePolicyDocument!))).toEqual(
      runtimeTrustPolicy(LOCAL_ACCOUNT),
    );
  });

  it("PutRolePolicy on a bounded runtime role; the policy is stored as given", async () => {
    const doc = JSON.stringify(runtimePolicy(scope));
    await new IAMClient(client()).send(
      new PutRolePolicyCommand({ RoleName: "agent-rt-d1", PolicyName: "runtime", PolicyDocument: doc }),
    );
    expect(iam.role("agent-rt-d1")?.policies.runtime).toBe(doc);
    expect(
      await outcome(
        new IAMClient(client()).send(
          new PutRolePolicyCommand({ RoleName: "agent-rt-d1", PolicyName: "x", PolicyDocument: "{not json" }),
        ),
      ),
    ).toBe("MalformedPolicyDocumentException 400");
  });

  it("a role without a grant (the API's) may not touch runtime roles", async () => {
    who = roles.get("api-control")!;
    try {
      expect(
        await outcome(new IAMClient(client()).send(new GetRoleCommand({ RoleName: "agent-rt-d1" }))),
      ).toBe("AccessDenied 403");
    } finally {
      who = roles.get("deploy")!;
    }
  });
});

describe("CloudWatch Logs under the deploy role's policy", () => {
  it("creates, keeps and deletes runtime log groups only", async () => {
    const logs = new CloudWatchLogsClient(client());
    const logGroupName = "/aws/lambda/agent-rt-d1";
    await logs.send(new CreateLogGroupCommand({ logGroupName }));
    expect(await outcome(logs.send(new CreateLogGroupCommand({ logGroupName })))).toBe(
      "ResourceAlreadyExistsException 400",
    );
    await logs.send(new PutRetentionPolicyCommand({ logGroupName, retentionInDays: 14 }));
    expect(
      await outcome(logs.send(new PutRetentionPolicyCommand({ logGroupName, retentionInDays: 13 }))),
    ).toBe("InvalidParameterException 400");
    expect(await outcome(logs.send(new CreateLogGroupCommand({ logGroupName: "/aws/lambda/other" })))).toBe(
      "AccessDeniedException 400",
    );
    expect(await outcome(logs.send(new DescribeLogGroupsCommand({})))).toBe("AccessDeniedException 400");
    expect(services.logs!.group(logGroupName)?.retentionInDays).toBe(14);
    await logs.send(new DeleteLogGroupCommand({ logGroupName }));
    expect(await outcome(logs.send(new DeleteLogGroupCommand({ logGroupName })))).toBe(
      "ResourceNotFoundException 400",
    );
  });
});

describe("Lambda's control plane under the deploy role's policy", () => {
  const lambda = () => new LambdaClient(client());

  it("refuses what Lambda refuses: another function, an unassumable role, an unsupported runtime, missing code", async () => {
    expect(await outcome(lambda().send(new CreateFunctionCommand({ ...fn, FunctionName: "other" })))).toBe(
      "AccessDeniedException 403",
    );
    // Passing a role other than a runtime role is iam:PassRole denied.
    const platformRole = `arn:aws:iam::${LOCAL_ACCOUNT}:role/agent-platform-deploy`;
    expect(await outcome(lambda().send(new CreateFunctionCommand({ ...fn, Role: platformRole })))).toBe(
      "AccessDeniedException 403",
    );
    const missingRole = `arn:aws:iam::${LOCAL_ACCOUNT}:role/agent-runtime/agent-rt-d9`;
    expect(await outcome(lambda().send(new CreateFunctionCommand({ ...fn, Role: missingRole })))).toBe(
      "InvalidParameterValueException 400",
    );
    expect(
      await outcome(
        lambda().send(new CreateFunctionCommand({ ...fn, Runtime: "nodejs20.x" as "nodejs22.x" })),
      ),
    ).toBe("InvalidParameterValueException 400");
    expect(
      await outcome(
        lambda().send(
          new CreateFunctionCommand({ ...fn, Code: { S3Bucket: "artifacts", S3Key: "missing.zip" } }),
        ),
      ),
    ).toBe("InvalidParameterValueException 400");
    expect(
      await outcome(lambda().send(new CreateFunctionCommand({ ...fn, Layers: [`${LAYER.slice(0, -1)}2`] }))),
    ).toBe("AccessDeniedException 403");
  });

  it("creates, updates, publishes and deletes a runtime function as the deploy step does", async () => {
    const client_ = lambda();
    const created = await client_.send(new CreateFunctionCommand(fn));
    expect(created.FunctionArn).toBe(`arn:aws:lambda:${REGION}:${LOCAL_ACCOUNT}:function:agent-rt-d1`);
    expect(created.CodeSha256).toBe(createHash("sha256").update("zip one").digest("base64"));
    expect(await outcome(client_.send(new CreateFunctionCommand(fn)))).toBe("ResourceConflictException 409");
    await waitUntilFunctionActiveV2({ client: client_, maxWaitTime: 5 }, { FunctionName: fn.FunctionName });
    const v1 = await client_.send(new PublishVersionCommand({ FunctionName: fn.FunctionName }));
    expect(v1.Version).toBe("1");
    // Nothing changed: Lambda answers the last version rather than publishing another.
    expect((await client_.send(new PublishVersionCommand({ FunctionName: fn.FunctionName }))).Version).toBe(
      "1",
    );
    await client_.send(
      new UpdateFunctionCodeCommand({
        FunctionName: fn.FunctionName,
        S3Bucket: "artifacts",
        S3Key: "runtimes/t1/d1/r2.zip",
      }),
    );
    await waitUntilFunctionUpdatedV2({ client: client_, maxWaitTime: 5 }, { FunctionName: fn.FunctionName });
    await client_.send(
      new UpdateFunctionConfigurationCommand({
        FunctionName: fn.FunctionName,
        Environment: { Variables: { AGENT_RUNTIME_CONFIG: '{"v":2}' } },
        MemorySize: 512,
      }),
    );
    expect(
      await outcome(
        client_.send(
          new UpdateFunctionConfigurationCommand({
            FunctionName: fn.FunctionName,
            Environment: { Variables: { BIG: "x".repeat(4100) } },
          }),
        ),
      ),
    ).toBe("InvalidParameterValueException 400");
    const v2 = await client_.send(new PublishVersionCommand({ FunctionName: fn.FunctionName }));
    expect(v2.Version).toBe("2");
    expect(v2.MemorySize).toBe(512);
    await client_.send(
      new PutFunctionEventInvokeConfigCommand({
        FunctionName: fn.FunctionName,
        Qualifier: "2",
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 60,
      }),
    );
    expect(functions.asyncRetries(fn.FunctionName, "2")).toBe(0);
    // The versions keep what they were published with.
    const v1Now = await client_.send(
      new GetFunctionCommand({ FunctionName: fn.FunctionName, Qualifier: "1" }),
    );
    expect(v1Now.Configuration?.MemorySize).toBe(1024);
    expect(functions.version(fn.FunctionName, "2")?.code.S3Key).toBe("runtimes/t1/d1/r2.zip");
    const listed = await client_.send(new ListVersionsByFunctionCommand({ FunctionName: fn.FunctionName }));
    expect(listed.Versions?.map((v) => v.Version)).toEqual(["$LATEST", "1", "2"]);
    await client_.send(new DeleteFunctionCommand({ FunctionName: fn.FunctionName, Qualifier: "1" }));
    expect(
      await outcome(client_.send(new GetFunctionCommand({ FunctionName: fn.FunctionName, Qualifier: "1" }))),
    ).toBe("ResourceNotFoundException 404");
  });

  it("a reservation the account cannot hold is refused; one it can is kept", async () => {
    const client_ = lambda();
    expect(
      await outcome(
        client_.send(
          new PutFunctionConcurrencyCommand({
            FunctionName: fn.FunctionName,
            ReservedConcurrentExecutions: 901,
          }),
        ),
      ),
    ).toBe("InvalidParameterValueException 400");
    await client_.send(
      new PutFunctionConcurrencyCommand({ FunctionName: fn.FunctionName, ReservedConcurrentExecutions: 2 }),
    );
    const got = await client_.send(new GetFunctionCommand({ FunctionName: fn.FunctionName }));
    expect(got.Concurrency?.ReservedConcurrentExecutions).toBe(2);
  });

  it("a third concurrent stream of a function reserved at 2 is TooManyRequestsException (429)", async () => {
    who = roles.get("api-agent")!;
    try {
      const stream = () =>
        new LambdaClient(client()).send(
          new InvokeWithResponseStreamCommand({
            FunctionName: fn.FunctionName,
            Qualifier: "2",
            Payload: Buffer.from("{}"),
          }),
        );
      const first = await stream();
      const second = await stream();
      const third = await stream().catch((e) => e);
      expect(third.name).toBe("TooManyRequestsException");
      expect(third.$metadata.httpStatusCode).toBe(429);
      expect(third.Reason).toBe("ReservedFunctionConcurrentInvocationLimitExceeded");
      release();
      for (const s of [first, second]) for await (const _ of s.EventStream!);
      // Both ended: their slots are free again.
      const fourth = await stream();
      for await (const _ of fourth.EventStream!);
    } finally {
      who = roles.get("deploy")!;
    }
  });

  it("ListFunctions is the revision sweeper's (the task role's), on *; the deploy role's policy has no grant", async () => {
    expect(await outcome(lambda().send(new ListFunctionsCommand({})))).toBe("AccessDeniedException 403");
    who = roles.get("task")!;
    try {
      const listed = await lambda().send(new ListFunctionsCommand({}));
      expect(listed.Functions?.map((f) => [f.FunctionName, f.Layers?.map((l) => l.Arn)])).toEqual([
        [fn.FunctionName, [LAYER]],
      ]);
    } finally {
      who = roles.get("deploy")!;
    }
  });

  it("deletes the function, then its role once its policy is gone", async () => {
    const client_ = lambda();
    await client_.send(new DeleteFunctionCommand({ FunctionName: fn.FunctionName }));
    expect(await outcome(client_.send(new GetFunctionCommand({ FunctionName: fn.FunctionName })))).toBe(
      "ResourceNotFoundException 404",
    );
    const iamClient = new IAMClient(client());
    expect(await outcome(iamClient.send(new DeleteRoleCommand({ RoleName: "agent-rt-d1" })))).toBe(
      "DeleteConflictException 409",
    );
    await iamClient.send(new DeleteRolePolicyCommand({ RoleName: "agent-rt-d1", PolicyName: "runtime" }));
    await iamClient.send(new DeleteRoleCommand({ RoleName: "agent-rt-d1" }));
    expect(iam.role("agent-rt-d1")).toBeUndefined();
  });
});
