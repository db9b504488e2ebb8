import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DecryptCommand, EncryptCommand, KMSClient } from "@aws-sdk/client-kms";
import { InvokeCommand, InvokeWithResponseStreamCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { CreateScheduleCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PolicyDocument } from "../../../shared/containment/runtime-policy.ts";
import { BACKEND_TOKEN_HEADER, newBackendToken, withBackendToken } from "../backend-token.ts";
import { invokeComplete } from "../lambda-stream.ts";
import { platformPrincipals } from "../platform-roles.ts";
import { mintRuntimeCredentials } from "./credentials.ts";
import { createPolicyProxy, type ProxyPrincipal } from "./handler.ts";

// A platform function's calls to the emulated services (KMS, Step Functions, Lambda, Scheduler) pass the proxy
// only as far as its role's policy allows: with the real SDK clients, what is allowed reaches the emulator and
// what is not is the SDK's AccessDeniedException, as in AWS.
const ACCOUNT = "000000000000";
const DATA_KEY = `arn:aws:kms:us-east-1:${ACCOUNT}:key/data`;
const SECRETS_KEY = `arn:aws:kms:us-east-1:${ACCOUNT}:key/secrets`;
const MACHINE = `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:bulk-export`;
const policy: PolicyDocument = {
  Version: "2012-10-17",
  Statement: [
    {
      Sid: "SealForOwnWorkspace",
      Effect: "Allow",
      Action: ["kms:Encrypt", "kms:Decrypt"],
      Resource: [SECRETS_KEY],
      Condition: { StringEquals: { "kms:EncryptionContext:tenant_id": "t1" } },
    },
    { Sid: "Export", Effect: "Allow", Action: ["states:StartExecution"], Resource: [MACHINE] },
    {
      Sid: "Trace",
      Effect: "Allow",
      Action: ["lambda:InvokeFunction"],
      Resource: [`arn:aws:lambda:us-east-1:${ACCOUNT}:function:agent-platform-AgentTraceIngest`],
    },
    {
      Sid: "Schedules",
      Effect: "Allow",
      Action: ["scheduler:CreateSchedule"],
      Resource: [`arn:aws:scheduler:us-east-1:${ACCOUNT}:schedule/agent-platform/*`],
    },
  ],
};
const creds = mintRuntimeCredentials();
let who: ProxyPrincipal = { ...creds, arn: `arn:aws:sts::${ACCOUNT}:assumed-role/tasks/fn`, policy };
const received: string[] = [];
/** The backend token each forwarded request carried. */
const tokens = new Set<unknown>();
const TOKEN = newBackendToken();
let emulator: Server;
let proxy: Server;
let endpoint: string;
const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

beforeAll(async () => {
  emulator = createServer((req, res) => {
    received.push(`${req.method} ${req.url} ${req.headers["x-amz-target"] ?? ""}`.trim());
    tokens.add(req.headers[BACKEND_TOKEN_HEADER]);
    req.resume();
    if (req.url?.includes("/response-streaming-invocations")) {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      return res.end(invokeComplete());
    }
    res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
    res.end(
      JSON.stringify({
        CiphertextBlob: "c2VhbGVk",
        KeyId: SECRETS_KEY,
        Plaintext: "eA==",
        executionArn: `${MACHINE}:x`,
        startDate: 1,
        ScheduleArn: "x",
      }),
    );
  });
  await new Promise<void>((r) => emulator.listen(0, "127.0.0.1", r));
  proxy = createServer(
    createPolicyProxy({
      principal: (id) => (id === who.accessKeyId ? who : undefined),
      upstream: {
        dynamodb: { endpoint: "http://127.0.0.1:9", token: TOKEN },
        s3: { endpoint: "http://127.0.0.1:9", token: TOKEN },
        emulator: { endpoint: urlOf(emulator), token: TOKEN },
      },
      region: "us-east-1",
      kms: {
        kmsKey: (id) => ({ data: DATA_KEY, secrets: SECRETS_KEY })[id],
        kmsKeyOfCiphertext: (b) => (b.toString() === "sealed" ? SECRETS_KEY : undefined),
      },
    }),
  );
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  endpoint = urlOf(proxy);
});
afterAll(async () => {
  for (const s of [proxy, emulator]) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

const client = { endpoint: "", region: "us-east-1", credentials: creds, maxAttempts: 1 };
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "allowed",
    (e: { name: string; $metadata?: { httpStatusCode?: number } }) =>
      `${e.name} ${e.$metadata?.httpStatusCode}`,
  );

describe("the policy proxy in front of the emulated services", () => {
  it("KMS: its own workspace's context on the secrets key only", async () => {
    const kms = new KMSClient({ ...client, endpoint });
    const plain = new Uint8Array([1]);
    expect(
      await outcome(
        kms.send(
          new EncryptCommand({ KeyId: "secrets", Plaintext: plain, EncryptionContext: { tenant_id: "t1" } }),
        ),
      ),
    ).toBe("allowed");
    expect(
      await outcome(
        kms.send(
          new EncryptCommand({ KeyId: "secrets", Plaintext: plain, EncryptionContext: { tenant_id: "t2" } }),
        ),
      ),
    ).toBe("AccessDeniedException 400");
    expect(await outcome(kms.send(new EncryptCommand({ KeyId: "secrets", Plaintext: plain })))).toBe(
      "AccessDeniedException 400",
    );
    expect(
      await outcome(
        kms.send(
          new EncryptCommand({ KeyId: "data", Plaintext: plain, EncryptionContext: { tenant_id: "t1" } }),
        ),
      ),
    ).toBe("AccessDeniedException 400");
    // Decrypt names no key: the ciphertext's is checked.
    const blob = new Uint8Array(Buffer.from("sealed"));
    expect(
      await outcome(
        kms.send(new DecryptCommand({ CiphertextBlob: blob, EncryptionContext: { tenant_id: "t1" } })),
      ),
    ).toBe("allowed");
    expect(
      await outcome(
        kms.send(new DecryptCommand({ CiphertextBlob: blob, EncryptionContext: { tenant_id: "t9" } })),
      ),
    ).toBe("AccessDeniedException 400");
  });

  it("Step Functions, Lambda and Scheduler: the resources the policy names, nothing else", async () => {
    const sfn = new SFNClient({ ...client, endpoint });
    expect(
      await outcome(sfn.send(new StartExecutionCommand({ stateMachineArn: MACHINE, input: "{}" }))),
    ).toBe("allowed");
    expect(
      await outcome(
        sfn.send(new StartExecutionCommand({ stateMachineArn: `${MACHINE}-other`, input: "{}" })),
      ),
    ).toBe("AccessDeniedException 400");
    // A caller's own token header is no token: the proxy sends the backend's.
    const lambda = withBackendToken(new LambdaClient({ ...client, endpoint }), "forged");
    expect(
      await outcome(
        lambda.send(
          new InvokeCommand({ FunctionName: "agent-platform-AgentTraceIngest", Payload: Buffer.from("[1]") }),
        ),
      ),
    ).toBe("allowed");
    expect(
      await outcome(
        lambda.send(
          new InvokeCommand({ FunctionName: "agent-platform-PurgeProjectRuns", Payload: Buffer.from("{}") }),
        ),
      ),
    ).toBe("AccessDeniedException 403");
    const scheduler = new SchedulerClient({ ...client, endpoint });
    const schedule = {
      Name: "export-1",
      GroupName: "agent-platform",
      ScheduleExpression: "rate(1 hour)",
      FlexibleTimeWindow: { Mode: "OFF" as const },
      Target: {
        Arn: "arn:aws:lambda:us-east-1:000000000000:function:f",
        RoleArn: `arn:aws:iam::${ACCOUNT}:role/scheduler`,
      },
    };
    // Creating a schedule passes its role: without iam:PassRole on it, denied.
    expect(await outcome(scheduler.send(new CreateScheduleCommand(schedule)))).toBe(
      "AccessDeniedException 403",
    );
    // Evaluations are remembered per policy document: a changed policy is a new document.
    who = {
      ...who,
      policy: {
        ...policy,
        Statement: [
          ...policy.Statement,
          {
            Sid: "PassSchedulerRole",
            Effect: "Allow",
            Action: ["iam:PassRole"],
            Resource: [`arn:aws:iam::${ACCOUNT}:role/scheduler`],
          },
        ],
      },
    };
    expect(await outcome(scheduler.send(new CreateScheduleCommand(schedule)))).toBe("allowed");
    expect(
      await outcome(scheduler.send(new CreateScheduleCommand({ ...schedule, GroupName: "default" }))),
    ).toBe("AccessDeniedException 403");
  });

  it("InvokeWithResponseStream of a runtime is lambda:InvokeFunction on its version: the router's role may, others not", async () => {
    const stream = (qualifier: string) =>
      new LambdaClient({ ...client, endpoint, credentials: who }).send(
        new InvokeWithResponseStreamCommand({
          FunctionName: "agent-rt-d1",
          Qualifier: qualifier,
          Payload: Buffer.from("{}"),
        }),
      );
    const saved = who;
    try {
      const roles = platformPrincipals();
      who = roles.get("api-agent")!;
      expect(await outcome(stream("rev-1"))).toBe("allowed");
      // The platform API's role (and the test's task role above) has no grant on runtimes.
      who = roles.get("api-platform")!;
      expect(await outcome(stream("rev-1"))).toBe("AccessDeniedException 403");
      who = saved;
      expect(await outcome(stream("rev-1"))).toBe("AccessDeniedException 403");
    } finally {
      who = saved;
    }
  });

  it("only what was allowed reached the emulator, each with the emulator's token", () => {
    expect([...tokens]).toEqual([TOKEN]);
    expect(received).toEqual([
      "POST / TrentService.Encrypt",
      "POST / TrentService.Decrypt",
      "POST / AWSStepFunctions.StartExecution",
      "POST /2015-03-31/functions/agent-platform-AgentTraceIngest/invocations",
      "POST /schedules/export-1",
      "POST /2021-11-15/functions/agent-rt-d1/response-streaming-invocations?Qualifier=rev-1",
    ]);
  });
});
