import { request } from "node:http";
import { CloudWatchLogsClient, DescribeLogGroupsCommand } from "@aws-sdk/client-cloudwatch-logs";
import { GetRoleCommand, IAMClient } from "@aws-sdk/client-iam";
import { EncryptCommand, KMSClient } from "@aws-sdk/client-kms";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localKmsKeys } from "../infra/local/policy-proxy/credentials.ts";
import { queryOf, signer } from "../infra/local/policy-proxy/sigv4.ts";
import { config } from "../shared/config.ts";
import { facts } from "./helpers/cloud.ts";
import { runtimePrincipal, startRuntimeProxy } from "./helpers/runtime-proxy.ts";

// A fresh review of issue 33 (secreview2): the policy proxy reads a call as the service its signature names (a
// runtime may invoke AgentTraceIngest, and decrypt its own sealed environment), while the emulator behind it picked
// the service by the request's shape — an X-Amz-Target before the path, a form-encoded POST to `/` as IAM. So a
// graph, signing with its runtime's own keys, sent an allowed Lambda invoke carrying `X-Amz-Target:
// TrentService.Decrypt` (decrypting another deployment's secrets), or an allowed KMS Decrypt whose JSON body was
// also a form (`…&Action=CreateRole&…`) and ran as IAM. Both failed on the code before the fix (the emulator
// answered them); the proxy now refuses a call whose shape is not its signed service's, and the emulator reads the
// service the same way (one function, `emulatedServiceOf`).
const tenant = `t-${crypto.randomUUID()}`;
const deployment = crypto.randomUUID();
const victim = {
  tenant_id: `t-${crypto.randomUUID()}`,
  deployment_id: crypto.randomUUID(),
  purpose: "runtime-env",
};
const runtime = runtimePrincipal(tenant, deployment);
const operator = { accessKeyId: facts.s3.access_key_id, secretAccessKey: facts.s3.secret_access_key };
const asOperator = {
  endpoint: facts.s3.endpoint,
  region: config.region,
  credentials: operator,
  maxAttempts: 1,
};
let proxy: Awaited<ReturnType<typeof startRuntimeProxy>>;
let endpoint: URL;
const kms = new KMSClient(asOperator);
const iam = new IAMClient({ ...asOperator, region: "us-east-1" });
const logs = new CloudWatchLogsClient(asOperator);

beforeAll(async () => {
  proxy = await startRuntimeProxy(runtime, { kms: localKmsKeys() });
  endpoint = new URL(proxy.endpoint);
});
afterAll(async () => {
  for (const c of [kms, iam, logs]) c.destroy();
  await proxy.close();
});

/** A request signed with the runtime's own keys for `service`, sent exactly as given; its status and body. */
async function signed(
  service: string,
  method: string,
  target: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const region = service === "iam" ? "us-east-1" : config.region;
  const s = await signer(service, region, runtime).sign({
    method,
    protocol: "http:",
    hostname: endpoint.hostname,
    port: Number(endpoint.port),
    path: target.split("?")[0],
    query: queryOf(target),
    headers: { host: endpoint.host, ...headers },
    body,
  });
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname: endpoint.hostname, port: endpoint.port, method, path: target, headers: s.headers },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const TRACE_INVOKE = "/2015-03-31/functions/AgentTraceIngest/invocations";

describe("a call whose shape names another service than its signature", () => {
  it("an allowed Lambda invoke carrying a KMS target does not decrypt another deployment's secret", async () => {
    const sealed = await kms.send(
      new EncryptCommand({
        KeyId: config.secretsKeyId,
        Plaintext: Buffer.from("victim-secret"),
        EncryptionContext: victim,
      }),
    );
    const body = JSON.stringify({
      CiphertextBlob: Buffer.from(sealed.CiphertextBlob!).toString("base64"),
      EncryptionContext: victim,
    });
    const r = await signed("lambda", "POST", TRACE_INVOKE, body, {
      "content-type": "application/x-amz-json-1.1",
      "x-amz-target": "TrentService.Decrypt",
    });
    expect(Buffer.from(JSON.parse(r.body).Plaintext ?? "", "base64").toString()).not.toContain("victim");
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
  });

  it("an allowed Lambda invoke carrying a CloudWatch Logs target creates no log group", async () => {
    const logGroupName = `/aws/lambda/agent-rt-${victim.deployment_id}`;
    const r = await signed("lambda", "POST", TRACE_INVOKE, JSON.stringify({ logGroupName }), {
      "content-type": "application/x-amz-json-1.1",
      "x-amz-target": "Logs_20140328.CreateLogGroup",
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    const found = await logs.send(new DescribeLogGroupsCommand({ logGroupNamePrefix: logGroupName }));
    expect(found.logGroups ?? []).toEqual([]);
  });

  it("an allowed KMS Decrypt of its own context whose body is also a form does not run as IAM", async () => {
    const RoleName = `hostile-${deployment.slice(0, 8)}`;
    const trust = JSON.stringify({
      Version: "2012-10-17",
      Statement: [
        { Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" },
      ],
    });
    const form = `&Action=CreateRole&RoleName=${RoleName}&AssumeRolePolicyDocument=${encodeURIComponent(trust)}&Version=2010-05-08&`;
    const body = JSON.stringify({
      KeyId: config.secretsKeyId,
      EncryptionContext: { tenant_id: tenant, deployment_id: deployment, purpose: "runtime-env" },
      CiphertextBlob: Buffer.from("x").toString("base64"),
      Pad: form,
    });
    const r = await signed("kms", "POST", "/", body, {
      "content-type": "application/x-www-form-urlencoded",
      "x-amz-target": "TrentService.Decrypt",
    });
    expect(r.body).not.toContain("<CreateRoleResponse");
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    const role = await iam.send(new GetRoleCommand({ RoleName })).then(
      () => "exists",
      (e: { name?: string }) => e.name,
    );
    expect(role).toBe("NoSuchEntityException");
  });

  it("an allowed KMS Decrypt sent to Lambda's control plane or carrying Step Functions' target is refused by the proxy", async () => {
    const own = { tenant_id: tenant, deployment_id: deployment, purpose: "runtime-env" };
    const decrypt = JSON.stringify({
      KeyId: config.secretsKeyId,
      EncryptionContext: own,
      CiphertextBlob: "eA==",
    });
    // Before: the emulator's control plane took it (UpdateFunctionCode of any function: its 404 for a missing one).
    const code = await signed(
      "kms",
      "PUT",
      `/2015-03-31/functions/agent-rt-${victim.deployment_id}/code`,
      decrypt,
      {
        "content-type": "application/x-amz-json-1.1",
        "x-amz-target": "TrentService.Decrypt",
      },
    );
    expect({ status: code.status, type: JSON.parse(code.body).__type }).toEqual({
      status: 400,
      type: "UnknownOperationException",
    });
    // Before: any state machine started with any input (here the revision workflow, for another workspace).
    const sfn = await signed(
      "lambda",
      "POST",
      TRACE_INVOKE,
      JSON.stringify({ stateMachineArn: "arn:aws:states:x:000000000000:stateMachine:none", input: "{}" }),
      { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AWSStepFunctions.StartExecution" },
    );
    expect({ status: sfn.status, type: JSON.parse(sfn.body).__type }).toEqual({
      status: 400,
      type: "UnknownOperationException",
    });
  });

  it("an allowed Lambda invoke carrying CodeBuild's StartBuild target starts no build", async () => {
    const r = await signed(
      "lambda",
      "POST",
      TRACE_INVOKE,
      JSON.stringify({ projectName: "agent-platform-revision-build" }),
      {
        "content-type": "application/x-amz-json-1.1",
        "x-amz-target": "CodeBuild_20161006.StartBuild",
      },
    );
    expect({ status: r.status, type: JSON.parse(r.body).__type }).toEqual({
      status: 400,
      type: "UnknownOperationException",
    });
  });

  it("a Lambda invoke whose path the emulator would read otherwise (dot segments, backslashes) is refused", async () => {
    for (const path of [
      "/2015-03-31/functions/AgentTraceIngest/invocations/../../agent-rt-x/code",
      "/2015-03-31/functions/AgentTraceIngest\\..\\agent-rt-x/invocations",
    ]) {
      const r = await signed("lambda", "POST", path, "{}", { "content-type": "application/json" });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
  });
});

// The third review's M1: each asynchronous invoke a runtime may send (trace ingestion, up to 256 KB) was answered
// 202 at once and held in the local cloud's memory, unbounded: a flood took the platform from 920 MB to 1.5 GB. A
// caller's queued events are now bounded (infra/local/lambda.ts, ASYNC_BYTES_PER_CALLER); past it the flood is
// throttled for that caller alone.
describe("asynchronous invokes held for one caller", () => {
  it("a runtime's flood of 250 KB trace invokes is throttled (429) instead of held; another runtime's still queues", async () => {
    const payload = JSON.stringify({ flood: "x".repeat(250 * 1024) });
    const event = { "content-type": "application/json", "x-amz-invocation-type": "Event" };
    const statuses: number[] = [];
    const other: string[] = [];
    const sendOne = async () => {
      const r = await signed("lambda", "POST", TRACE_INVOKE, payload, event);
      statuses.push(r.status);
      if (r.status !== 202 && r.status !== 429) other.push(`${r.status} ${r.body.slice(0, 300)}`);
      if (r.status === 429) expect(JSON.parse(r.body)).toMatchObject({ __type: "TooManyRequestsException" });
    };
    // 160 events (40 MB) from 32 senders at once: far past one caller's 16 MiB while they wait to run.
    for (let round = 0; round < 5; round++) await Promise.all(Array.from({ length: 32 }, sendOne));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(other).toEqual([]);
    const another = runtimePrincipal(`t-${crypto.randomUUID()}`, crypto.randomUUID());
    const second = await startRuntimeProxy(another, { kms: localKmsKeys() });
    try {
      const to = new URL(second.endpoint);
      const s = await signer("lambda", config.region, another).sign({
        method: "POST",
        protocol: "http:",
        hostname: to.hostname,
        port: Number(to.port),
        path: TRACE_INVOKE,
        query: {},
        headers: { host: to.host, ...event },
        body: "{}",
      });
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          { hostname: to.hostname, port: to.port, method: "POST", path: TRACE_INVOKE, headers: s.headers },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end("{}");
      });
      expect(status).toBe(202);
    } finally {
      await second.close();
    }
  }, 120_000);
});

// secreview3: the router starts the drains a runtime's answers ask for (100 per answer, each an asynchronous invoke
// of that deployment's own function, under the router's role), and a hostile runtime can stall its own function's
// invocations. Its drains then filled the router's one 16 MiB bucket of held events, and every other deployment's
// drain was refused 429 until they aged out. The bound is now per caller and function: the same caller's events for
// another function still queue. On the code before, the last invoke below answers 429.
describe("asynchronous invokes held for one caller and function", () => {
  it("a caller whose events for one function are throttled still queues events for another", async () => {
    const policy = {
      Version: "2012-10-17" as const,
      Statement: [
        {
          Sid: "InvokeTwo",
          Effect: "Allow" as const,
          Action: ["lambda:InvokeFunction"],
          Resource: [
            `arn:aws:lambda:${config.region}:000000000000:function:AgentTraceIngest`,
            `arn:aws:lambda:${config.region}:000000000000:function:AgentCronTick`,
          ],
        },
      ],
    };
    const caller = runtimePrincipal(`t-${crypto.randomUUID()}`, crypto.randomUUID(), policy);
    const own = await startRuntimeProxy(caller, { kms: localKmsKeys() });
    const to = new URL(own.endpoint);
    const send = async (path: string, body: string) => {
      const s = await signer("lambda", config.region, caller).sign({
        method: "POST",
        protocol: "http:",
        hostname: to.hostname,
        port: Number(to.port),
        path,
        query: {},
        headers: { host: to.host, "content-type": "application/json", "x-amz-invocation-type": "Event" },
        body,
      });
      return new Promise<number>((resolve) => {
        const req = request(
          { hostname: to.hostname, port: to.port, method: "POST", path, headers: s.headers },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        // A throttled request's connection may be closed before its body is sent: not an answer.
        req.on("error", () => resolve(0));
        req.end(body);
      });
    };
    try {
      const payload = JSON.stringify({ flood: "x".repeat(250 * 1024) });
      // A tick of a cron that does not exist: the task answers it as not found, and changes nothing. As large as a
      // flood event, so a full bucket (less than one event's room left) could not take it either.
      const tick = JSON.stringify({
        tenant_id: `t-${crypto.randomUUID()}`,
        deployment_id: crypto.randomUUID(),
        cron_id: crypto.randomUUID(),
        scheduled_at: new Date().toISOString(),
        pad: "x".repeat(250 * 1024),
      });
      // 96 events (24 MB) at once, past the caller's 16 MiB for trace ingestion; right after a batch that was
      // throttled (the bucket full), the same caller's invoke of another function.
      const ticks: number[] = [];
      for (let round = 0; round < 3; round++) {
        const batch = await Promise.all(Array.from({ length: 96 }, () => send(TRACE_INVOKE, payload)));
        if (batch.includes(429))
          ticks.push(await send("/2015-03-31/functions/AgentCronTick/invocations", tick));
      }
      expect(ticks.length).toBeGreaterThan(0);
      expect(ticks).toEqual(ticks.map(() => 202));
    } finally {
      await own.close();
    }
  }, 120_000);
});
