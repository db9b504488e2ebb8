import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { EncryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { GetScheduleCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { DescribeExecutionCommand, SFNClient } from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { BACKEND_TOKEN_HEADER } from "../infra/local/backend-token.ts";
import { type PlatformRoleProxy, startPlatformRoleProxy } from "../infra/local/platform-roles.ts";
import { mintRuntimeCredentials } from "../infra/local/policy-proxy/credentials.ts";
import { localStateMachineArn } from "../infra/local/sfn.ts";
import { CODEBUILD_RESOURCE } from "../infra/local/sfn-codebuild.ts";
import { config } from "../shared/config.ts";
import { tableName } from "../shared/tables.ts";
import { facts } from "./helpers/cloud.ts";

// Issue 33: no service behind the local cloud answers an unsigned request. DynamoDB Local, s3rver and the AWS
// emulator (KMS, Step Functions, Lambda with the CodeBuild stand-in, Scheduler) listen on loopback, where every
// process of the user — and any request the platform makes for someone, a webhook — reaches them. They answer only
// what the policy proxy forwards (with the token of their start); the proxy, local.json's AWS endpoint, answers
// only a known role's signature, as far as that role's policy goes. The chain this stops: a webhook at the
// emulator's port invoked the CodeBuild stand-in with NODE_OPTIONS=--import=data:…, which ran outside any sandbox.
const backends = inject("backends");
const operator = { accessKeyId: facts.s3.access_key_id, secretAccessKey: facts.s3.secret_access_key };
type Keys = { accessKeyId: string; secretAccessKey: string };

const made: { destroy(): void }[] = [];
/** The SDK's own client of each service at `endpoint`, signing with `keys`. */
function clientsAt(endpoint: string, credentials: Keys) {
  const common = { endpoint, region: config.region, credentials, maxAttempts: 1 };
  const c = {
    dynamodb: new DynamoDBClient(common),
    s3: new S3Client({
      ...common,
      forcePathStyle: true,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    }),
    kms: new KMSClient(common),
    sfn: new SFNClient(common),
    lambda: new LambdaClient(common),
    scheduler: new SchedulerClient(common),
  };
  made.push(...Object.values(c));
  return c;
}
type Clients = ReturnType<typeof clientsAt>;

const noExecution = `${localStateMachineArn("revision").replace(":stateMachine:", ":execution:")}:none`;
/** One harmless call per service, with the SDK and as an unsigned request; which backend answers it. */
const SERVICES: {
  name: string;
  backend: keyof typeof backends;
  call(c: Clients): Promise<unknown>;
  unsigned: { method: string; path: string; headers?: Record<string, string>; body?: string };
}[] = [
  {
    name: "DynamoDB",
    backend: "dynamodb",
    call: (c) =>
      c.dynamodb.send(
        new GetItemCommand({ TableName: tableName("main"), Key: { PK: { S: "x" }, SK: { S: "x" } } }),
      ),
    unsigned: {
      method: "POST",
      path: "/",
      headers: { "x-amz-target": "DynamoDB_20120810.ListTables" },
      body: "{}",
    },
  },
  {
    name: "S3",
    backend: "s3",
    call: (c) => c.s3.send(new ListObjectsV2Command({ Bucket: facts.s3.bucket, MaxKeys: 1 })),
    unsigned: { method: "GET", path: `/${facts.s3.bucket}?list-type=2` },
  },
  {
    name: "KMS",
    backend: "emulator",
    call: (c) => c.kms.send(new GenerateDataKeyCommand({ KeyId: "alias/local", KeySpec: "AES_256" })),
    unsigned: {
      method: "POST",
      path: "/",
      headers: { "x-amz-target": "TrentService.GenerateDataKey" },
      body: JSON.stringify({ KeyId: "alias/local", KeySpec: "AES_256" }),
    },
  },
  {
    name: "Step Functions",
    backend: "emulator",
    call: (c) => c.sfn.send(new DescribeExecutionCommand({ executionArn: noExecution })),
    unsigned: {
      method: "POST",
      path: "/",
      headers: { "x-amz-target": "AWSStepFunctions.DescribeExecution" },
      body: JSON.stringify({ executionArn: noExecution }),
    },
  },
  {
    name: "Lambda",
    backend: "emulator",
    call: (c) => c.lambda.send(new InvokeCommand({ FunctionName: "NoSuchFunction", Payload: "{}" })),
    unsigned: { method: "POST", path: "/2015-03-31/functions/NoSuchFunction/invocations", body: "{}" },
  },
  {
    name: "Scheduler",
    backend: "emulator",
    call: (c) => c.scheduler.send(new GetScheduleCommand({ Name: "none" })),
    unsigned: { method: "GET", path: "/schedules/none" },
  },
];

/** What a refused call says: its error's name and HTTP status (undefined when the call went through). */
async function outcome(p: Promise<unknown>) {
  return p.then(
    () => ({ name: "allowed", status: 200 }),
    (e: { name?: string; $metadata?: { httpStatusCode?: number } }) => ({
      name: e.name,
      status: e.$metadata?.httpStatusCode,
    }),
  );
}

/** An unsigned request's answer: its status and AWS error code (JSON __type or x-amzn-ErrorType, S3's <Code>). */
async function unsignedAt(endpoint: string, u: (typeof SERVICES)[number]["unsigned"]) {
  const res = await fetch(`${endpoint}${u.path}`, {
    method: u.method,
    headers: { "content-type": "application/x-amz-json-1.1", ...u.headers },
    body: u.body,
  });
  const text = await res.text();
  const code =
    res.headers.get("x-amzn-errortype")?.split(":")[0] ??
    /"__type":"(?:[^"#]*#)?([^"]+)"/.exec(text)?.[1] ??
    /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
  return { status: res.status, code };
}

let rolesProxy: PlatformRoleProxy;
let system: Keys;
beforeAll(async () => {
  // The platform roles, as the cloud's proxy knows them (the same code on the same backends): the health check's
  // role (api-system) has no grant at all.
  rolesProxy = await startPlatformRoleProxy(backends);
  system = rolesProxy.principals.get("api-system")!;
});
afterAll(async () => {
  for (const c of made) c.destroy();
  await rolesProxy?.close();
});

describe("every backend answers only the policy proxy", () => {
  const GATE = { dynamodb: "AccessDeniedException", s3: "AccessDenied", emulator: "AccessDeniedException" };

  it.each(SERVICES.map((s) => [s.name, s] as const))(
    "%s: an unsigned request is refused (403)",
    async (_, s) => {
      expect(await unsignedAt(backends[s.backend].endpoint, s.unsigned)).toEqual({
        status: 403,
        code: GATE[s.backend],
      });
    },
  );

  it.each(SERVICES.map((s) => [s.name, s] as const))(
    "%s: a wrong signature, and the operator's valid one, are refused there too (403)",
    async (_, s) => {
      const endpoint = backends[s.backend].endpoint;
      const forged = clientsAt(endpoint, { ...operator, secretAccessKey: "wrong" });
      expect(await outcome(s.call(forged))).toEqual({ name: GATE[s.backend], status: 403 });
      // Valid at the proxy, which allows the operator everything; straight to a backend it is nothing.
      expect(await outcome(s.call(clientsAt(endpoint, operator)))).toEqual({
        name: GATE[s.backend],
        status: 403,
      });
      expect(await outcome(s.call(clientsAt(endpoint, system)))).toEqual({
        name: GATE[s.backend],
        status: 403,
      });
    },
  );
});

describe("the policy proxy (local.json's AWS endpoint): a known role's signature, as far as its policy goes", () => {
  const proxy = facts.s3.endpoint;

  it("every backend is behind it: none of local.json's endpoints is a backend's", () => {
    for (const b of Object.values(backends)) {
      expect(facts.s3.endpoint).not.toBe(b.endpoint);
      expect(facts.dynamodb_endpoint).not.toBe(b.endpoint);
    }
    expect(facts.dynamodb_endpoint).toBe(proxy);
  });

  it.each(SERVICES.map((s) => [s.name, s] as const))("%s: unsigned, refused", async (_, s) => {
    const r = await unsignedAt(proxy, s.unsigned);
    if (s.backend === "s3") expect(r).toEqual({ status: 403, code: "AccessDenied" });
    else expect(r.code).toBe("MissingAuthenticationTokenException");
  });

  it.each(SERVICES.map((s) => [s.name, s] as const))(
    "%s: a wrong signature, an unknown key and a role without the grant are refused; the operator passes",
    async (_, s) => {
      const wrong = await outcome(s.call(clientsAt(proxy, { ...operator, secretAccessKey: "wrong" })));
      expect(wrong.name).toBe(s.backend === "s3" ? "SignatureDoesNotMatch" : "InvalidSignatureException");
      const unknown = await outcome(s.call(clientsAt(proxy, mintRuntimeCredentials())));
      expect(unknown.name).toBe(s.backend === "s3" ? "InvalidAccessKeyId" : "UnrecognizedClientException");
      const denied = await outcome(s.call(clientsAt(rolesProxy.url, system)));
      expect(denied.name).toBe(s.backend === "s3" ? "AccessDenied" : "AccessDeniedException");
      // As each service answers a denial: DynamoDB, KMS and Step Functions with 400, the others with 403.
      expect(denied.status).toBe(["DynamoDB", "KMS", "Step Functions"].includes(s.name) ? 400 : 403);
      // The operator's call reaches the service, which answers it (a missing execution, function or schedule).
      const allowed = await outcome(s.call(clientsAt(proxy, operator)));
      expect(["allowed", "ExecutionDoesNotExist", "ResourceNotFoundException"]).toContain(allowed.name);
    },
  );
});

describe("the CodeBuild stand-in: only a state machine's Build state starts a build, with the build's variables", () => {
  const dir = mkdtempSync(join(tmpdir(), "codebuild-chain-"));
  const marker = join(dir, "ran");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const code = `import{writeFileSync}from"node:fs";writeFileSync(${JSON.stringify(marker)},"ran")`;
  const startBuild = JSON.stringify({
    ProjectName: "x",
    EnvironmentVariablesOverride: [
      { Name: "NODE_OPTIONS", Value: `--import=data:text/javascript,${encodeURIComponent(code)}` },
    ],
  });
  const invocation = `/2015-03-31/functions/${encodeURIComponent(`${CODEBUILD_RESOURCE}.sync`)}/invocations`;

  it("a Lambda invoke of it at the emulator's loopback port (what the webhook sent) is refused, and nothing runs", async () => {
    const res = await fetch(`${backends.emulator.endpoint}${invocation}`, {
      method: "POST",
      body: startBuild,
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("x-amzn-errortype")).toBe("AccessDeniedException");
    expect(existsSync(marker)).toBe(false);
  });

  it("signed by the operator, who may invoke anything: no Lambda function's name (refused as Lambda refuses it), and nothing runs", async () => {
    const lambda = clientsAt(facts.s3.endpoint, operator).lambda;
    const out = await outcome(
      lambda.send(
        new InvokeCommand({ FunctionName: `${CODEBUILD_RESOURCE}.sync`, Payload: Buffer.from(startBuild) }),
      ),
    );
    // A Step Functions integration's ARN is not a function's name: Lambda's ValidationException.
    expect(out).toEqual({ name: "ValidationException", status: 400 });
    // Even with the emulator's token (what only the proxy holds): it is no Lambda function.
    const res = await fetch(`${backends.emulator.endpoint}${invocation}`, {
      method: "POST",
      headers: { [BACKEND_TOKEN_HEADER]: backends.emulator.token },
      body: startBuild,
    });
    expect(res.status).toBe(400);
    await new Promise((r) => setTimeout(r, 1000));
    expect(existsSync(marker)).toBe(false);
  });
});

describe("request bodies are bounded as AWS bounds them", () => {
  const ops = () => clientsAt(facts.s3.endpoint, operator);

  it("Lambda: 6 MB synchronous, 256 KB asynchronous (413 RequestTooLargeException)", async () => {
    const { lambda } = ops();
    const payload = (bytes: number) => Buffer.from(JSON.stringify({ pad: "x".repeat(bytes) }));
    expect(
      await outcome(
        lambda.send(
          new InvokeCommand({
            FunctionName: "NoSuchFunction",
            InvocationType: "Event",
            Payload: payload(300_000),
          }),
        ),
      ),
    ).toEqual({ name: "RequestTooLargeException", status: 413 });
    expect(
      await outcome(
        lambda.send(new InvokeCommand({ FunctionName: "NoSuchFunction", Payload: payload(300_000) })),
      ),
    ).toEqual({ name: "ResourceNotFoundException", status: 404 });
    const big = await fetch(`${backends.emulator.endpoint}/2015-03-31/functions/NoSuchFunction/invocations`, {
      method: "POST",
      headers: { [BACKEND_TOKEN_HEADER]: backends.emulator.token },
      body: payload(6 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
    expect(big.headers.get("x-amzn-errortype")).toBe("RequestTooLargeException");
  });

  it("KMS: at most 4096 bytes of plaintext (ValidationException), a request of 32 KiB (413)", async () => {
    const { kms } = ops();
    const encrypt = (bytes: number) =>
      outcome(kms.send(new EncryptCommand({ KeyId: "alias/local", Plaintext: new Uint8Array(bytes) })));
    expect(await encrypt(4096)).toEqual({ name: "allowed", status: 200 });
    expect((await encrypt(4097)).name).toBe("ValidationException");
    expect(await encrypt(40 * 1024)).toMatchObject({ status: 413 });
  });

  it("S3: a PUT states its length, at most 5 GiB (400 EntityTooLarge)", async () => {
    const put = (headers: Record<string, string>) =>
      new Promise<{ status?: number; body: string }>((done, fail) => {
        const url = new URL(`${backends.s3.endpoint}/${facts.s3.bucket}/big`);
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname, method: "PUT", headers },
          (res) => {
            let body = "";
            res.on("data", (c) => {
              body += c;
            });
            res.on("end", () => {
              req.destroy();
              done({ status: res.statusCode, body });
            });
          },
        );
        req.on("error", fail);
        req.flushHeaders();
      });
    const token = { [BACKEND_TOKEN_HEADER]: backends.s3.token };
    const tooLarge = await put({ ...token, "content-length": String(5 * 1024 ** 3 + 1) });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body).toContain("<Code>EntityTooLarge</Code>");
    const unstated = await put({ ...token, "transfer-encoding": "chunked" });
    expect(unstated.status).toBe(411);
    expect(unstated.body).toContain("<Code>MissingContentLength</Code>");
  });

  it("DynamoDB Local: at most 16 MiB (413)", async () => {
    // Refused on the stated length, before the body is sent: the client asks to continue first (a client still
    // writing 16 MiB to a server that answered and closed gets EPIPE instead of the answer).
    const status = await new Promise<number | undefined>((done, fail) => {
      const url = new URL(backends.dynamodb.endpoint);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: "/",
          method: "POST",
          headers: {
            [BACKEND_TOKEN_HEADER]: backends.dynamodb.token,
            "x-amz-target": "DynamoDB_20120810.ListTables",
            "content-type": "application/x-amz-json-1.0",
            "content-length": String(16 * 1024 * 1024 + 1),
            expect: "100-continue",
          },
        },
        (res) => {
          res.resume();
          req.destroy();
          done(res.statusCode);
        },
      );
      req.on("error", fail);
      req.on("continue", () => req.end(" ".repeat(16 * 1024 * 1024 + 1)));
      req.flushHeaders();
    });
    expect(status).toBe(413);
  });
});
