import { createHash } from "node:crypto";
import {
  CreateFunctionCommand,
  InvokeCommand,
  InvokeWithResponseStreamCommand,
  LambdaClient,
  PublishVersionCommand,
  PutFunctionConcurrencyCommand,
  PutFunctionEventInvokeConfigCommand,
} from "@aws-sdk/client-lambda";
import { afterAll, describe, expect, it } from "vitest";
import { REGION, signedEmulator } from "../../../test/helpers/signed-emulator.ts";
import { LocalLambda } from "../lambda.ts";
import { localResourceArns, platformPrincipals } from "../platform-roles.ts";
import type { ProxyPrincipal } from "../policy-proxy/handler.ts";
import { LOCAL_ACCOUNT } from "../policy-proxy/local-tables.ts";
import { LambdaFunctions } from "./lambda-functions.ts";

// A function created through Lambda's API runs locally as its configuration says, as in AWS: its asynchronous
// invocations (a deployment's drains) hold a slot of its reserved concurrency while they run — a throttled one waits
// in the queue until a slot is free or it is older than its MaximumEventAgeInSeconds — and an invocation past its
// Timeout ends with Lambda's Sandbox.Timedout error. Real SDK clients, through the policy proxy under the platform's
// roles (the deploy role creates, the router's role invokes).
const LAYER = localResourceArns(REGION).runtimeLayer();
const roles = platformPrincipals(undefined, REGION);
const principals: ProxyPrincipal[] = [roles.get("deploy")!, roles.get("api-agent")!];
const code = Buffer.from("zip");
const functions = new LambdaFunctions({
  region: REGION,
  account: LOCAL_ACCOUNT,
  accountConcurrency: 1000,
  layers: [LAYER],
  roleAssumable: () => true,
  codeObject: async () => ({ size: code.length, sha256: createHash("sha256").update(code).digest("base64") }),
});

/** Each function's invocations by kind: a drain runs until the test lets it end; "hang" never ends. */
const gates: (() => void)[] = [];
let drainsStarted = 0;
const resolve = (nameOrArn: string) =>
  functions.find(nameOrArn)
    ? async (event: unknown) => {
        if ((event as { kind?: string }).kind === "hang") return new Promise(() => {});
        drainsStarted++;
        await new Promise<void>((r) => gates.push(r));
        return null;
      }
    : undefined;
const lambda = new LocalLambda(resolve, 10, (name) => functions.runSettings(name) ?? { retries: 2 });
const services = {
  functions,
  lambda,
  // A streamed answer that never ends (the function's side is aborted when the caller's deadline passes).
  streaming: (name: string) =>
    functions.find(name)
      ? (async function* () {
          yield Buffer.from("started");
          await new Promise(() => {});
        })()
      : undefined,
};
const aws = signedEmulator(services, { principal: (id) => principals.find((p) => p.accessKeyId === id) });
afterAll(() => {
  lambda.stop();
  for (const open of gates.splice(0)) open();
});

const as = (role: "deploy" | "api-agent") => new LambdaClient(aws.client(roles.get(role)!));

/** A runtime function as the deploy step makes one: a published version, a reservation, its drain setting. */
async function runtimeFunction(name: string, opts: { reserved?: number; timeout?: number }): Promise<string> {
  const deploy = as("deploy");
  await deploy.send(
    new CreateFunctionCommand({
      FunctionName: name,
      Role: `arn:aws:iam::${LOCAL_ACCOUNT}:role/agent-runtime/${name}`,
      Runtime: "nodejs22.x",
      Handler: "index.handler",
      Code: { S3Bucket: "artifacts", S3Key: `runtimes/${name}.zip` },
      Layers: [LAYER],
      Timeout: opts.timeout ?? 900,
      MemorySize: 1024,
    }),
  );
  const { Version } = await deploy.send(new PublishVersionCommand({ FunctionName: name }));
  await deploy.send(
    new PutFunctionEventInvokeConfigCommand({
      FunctionName: name,
      Qualifier: Version,
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    }),
  );
  if (opts.reserved !== undefined)
    await deploy.send(
      new PutFunctionConcurrencyCommand({ FunctionName: name, ReservedConcurrentExecutions: opts.reserved }),
    );
  return Version!;
}

const drain = (name: string, version: string, kind = "drain") =>
  as("api-agent").send(
    new InvokeCommand({
      FunctionName: name,
      Qualifier: version,
      InvocationType: "Event",
      Payload: Buffer.from(JSON.stringify({ kind })),
    }),
  );
const stream = (name: string, version: string) =>
  as("api-agent").send(
    new InvokeWithResponseStreamCommand({
      FunctionName: name,
      Qualifier: version,
      Payload: Buffer.from("{}"),
    }),
  );
const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe("drains count against the function's reserved concurrency, as Lambda's asynchronous invocations do", () => {
  it("two running drains of a function reserved at 2 take both slots: a stream is TooManyRequestsException (429)", async () => {
    const version = await runtimeFunction("agent-rt-drains", { reserved: 2 });
    const before = drainsStarted;
    expect((await drain("agent-rt-drains", version)).StatusCode).toBe(202);
    expect((await drain("agent-rt-drains", version)).StatusCode).toBe(202);
    await until(() => drainsStarted === before + 2);
    const refused = await stream("agent-rt-drains", version).catch((e) => e);
    expect(refused.name).toBe("TooManyRequestsException");
    expect(refused.$metadata.httpStatusCode).toBe(429);
    expect(refused.Reason).toBe("ReservedFunctionConcurrentInvocationLimitExceeded");

    // A third drain is accepted (202) and waits in the queue: it runs once a slot is free, not before.
    expect((await drain("agent-rt-drains", version)).StatusCode).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    expect(drainsStarted).toBe(before + 2);
    gates.shift()!();
    await until(() => drainsStarted === before + 3);
    for (const open of gates.splice(0)) open();
    await until(() => gates.length === 0);
  });

  it("a throttled drain older than its MaximumEventAgeInSeconds is dropped: it never runs", async () => {
    const version = await runtimeFunction("agent-rt-aged", { reserved: 1 });
    const before = drainsStarted;
    await drain("agent-rt-aged", version);
    await until(() => drainsStarted === before + 1);
    // The platform's setting is 60 s (lambda-host.ts DRAIN_INVOKE_CONFIG); an event here may wait 0.3 s.
    const aged = new LocalLambda(resolve, 10, (name) => ({
      ...functions.runSettings(name)!,
      maxEventAgeSeconds: 0.3,
    }));
    await aged.invoke(`agent-rt-aged:${version}`, { kind: "drain" }, true);
    await aged.drain();
    expect(drainsStarted).toBe(before + 1);
    for (const open of gates.splice(0)) open();
  });
});

describe("a function's Timeout is enforced: past it an invocation ends with Lambda's Sandbox.Timedout", () => {
  it("a buffered invoke answers 200 with X-Amz-Function-Error Unhandled and the timeout's error", async () => {
    const version = await runtimeFunction("agent-rt-slow", { timeout: 1 });
    const started = Date.now();
    const out = await as("api-agent").send(
      new InvokeCommand({
        FunctionName: "agent-rt-slow",
        Qualifier: version,
        Payload: Buffer.from(JSON.stringify({ kind: "hang" })),
      }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBe("Unhandled");
    const payload = JSON.parse(Buffer.from(out.Payload!).toString("utf8"));
    expect(payload.errorType).toBe("Sandbox.Timedout");
    expect(payload.errorMessage).toMatch(
      /^RequestId: [0-9a-f-]{36} Error: Task timed out after 1\.00 seconds$/,
    );
  });

  it("a streamed invoke ends with InvokeComplete's ErrorCode Sandbox.Timedout, and its slot is free again", async () => {
    const version = await runtimeFunction("agent-rt-slow-stream", { timeout: 1, reserved: 1 });
    const res = await stream("agent-rt-slow-stream", version);
    const events: unknown[] = [];
    for await (const e of res.EventStream!) events.push(e);
    expect(events.at(-1)).toEqual({
      InvokeComplete: {
        ErrorCode: "Sandbox.Timedout",
        ErrorDetails: expect.stringMatching(/Task timed out after 1\.00 seconds$/),
      },
    });
    const again = await stream("agent-rt-slow-stream", version);
    expect(again.$metadata.httpStatusCode).toBe(200);
  });
});
