import { DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand } from "@aws-sdk/client-dynamodb";
import { GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type PlatformRoleProxy, startPlatformRoleProxy } from "../infra/local/platform-roles.ts";
import { localStateMachineArn } from "../infra/local/sfn.ts";
import { config } from "../shared/config.ts";
import { tableName } from "../shared/tables.ts";
import "./helpers/cloud.ts";

// Issue 26 (2): a platform function's AWS calls on the local cloud are signed with its role's own credentials and
// checked against that role's policy (infra/policies/roles.ts, rendered with the local ARNs), so a grant the role
// lacks fails here as it fails in AWS.
let proxy: PlatformRoleProxy;
const clients: { destroy(): void }[] = [];

/** The SDK clients a platform function gets: its role's keys, every endpoint at the proxy (environmentFor). */
function as(functionId: string) {
  const env = proxy.environmentFor(functionId);
  if (!env) throw new Error(`${functionId} has no platform role`);
  const credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY };
  const common = { region: env.AWS_REGION, credentials, maxAttempts: 1 };
  const ddb = new DynamoDBClient({ ...common, endpoint: env.AWS_ENDPOINT_URL_DYNAMODB });
  const s3 = new S3Client({
    ...common,
    endpoint: env.AWS_ENDPOINT_URL_S3,
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const kms = new KMSClient({ ...common, endpoint: env.AWS_ENDPOINT_URL_KMS });
  const sfn = new SFNClient({ ...common, endpoint: env.AWS_ENDPOINT_URL_SFN });
  clients.push(ddb, s3, kms, sfn);
  return { ddb, s3, kms, sfn };
}

async function refusal(p: Promise<unknown>): Promise<{ name?: string; message?: string; status?: number }> {
  const err = await p.then(
    () => undefined,
    (e: { name?: string; message?: string; $metadata?: { httpStatusCode?: number } }) => e,
  );
  expect(err, "the call should have been refused").toBeDefined();
  return { name: err?.name, message: err?.message, status: err?.$metadata?.httpStatusCode };
}

beforeAll(async () => {
  proxy = await startPlatformRoleProxy(inject("backends"));
});
afterAll(async () => {
  for (const c of clients) c.destroy();
  await proxy.close();
});

const S = (s: string) => ({ S: s });
const RUNS = tableName("runs");
const MAIN = tableName("main");
const CLEANUP = "Task-RunRetentionCleanup";

describe("platform functions through the policy proxy, each with its role's credentials", () => {
  it("each platform function gets its role's own keys; the agent runtime has none of these", () => {
    const control = proxy.environmentFor("ControlDeploymentsCreate");
    const cleanup = proxy.environmentFor(CLEANUP);
    expect(cleanup?.AWS_ACCESS_KEY_ID).toMatch(/^AKIA[A-Z0-9]{16}$/);
    expect(control?.AWS_ACCESS_KEY_ID).toMatch(/^AKIA/);
    expect(control?.AWS_ACCESS_KEY_ID).not.toBe(cleanup?.AWS_ACCESS_KEY_ID);
    expect(cleanup?.AWS_ENDPOINT_URL_DYNAMODB).toBe(proxy.url);
    expect(proxy.environmentFor("AgentRuntime")).toBeUndefined();
  });

  it("an API handler writes and queries its tables' indexes, as its group's role allows", async () => {
    const { ddb } = as("AgentRouter");
    const pk = `TEST#${crypto.randomUUID()}`;
    await ddb.send(
      new PutItemCommand({ TableName: MAIN, Item: { PK: S(pk), SK: S("a"), GSI1PK: S(pk), GSI1SK: S("1") } }),
    );
    const q = await ddb.send(
      new QueryCommand({
        TableName: MAIN,
        IndexName: "GSI1",
        KeyConditionExpression: "GSI1PK = :p",
        ExpressionAttributeValues: { ":p": S(pk) },
      }),
    );
    expect(q.Items?.map((i) => i.SK)).toEqual([S("a")]);
  });

  it("the retention cleanup may read a run by its key but not query the runs table's index: AccessDenied", async () => {
    const { ddb } = as(CLEANUP);
    await ddb.send(new GetItemCommand({ TableName: RUNS, Key: { PK: S("TEST#none"), SK: S("none") } }));
    const denied = await refusal(
      ddb.send(
        new QueryCommand({
          TableName: RUNS,
          IndexName: "GSI1",
          KeyConditionExpression: "GSI1PK = :p",
          ExpressionAttributeValues: { ":p": S("TEST#none") },
        }),
      ),
    );
    expect(denied.name).toBe("AccessDeniedException");
    expect(denied.status).toBe(400);
    expect(denied.message).toContain("assumed-role/agent-platform-task-RunRetentionCleanup/");
    expect(denied.message).toContain(
      `on resource: arn:aws:dynamodb:${config.region}:000000000000:table/${RUNS}/index/GSI1`,
    );
  });

  it("the retention cleanup deletes under payloads/ only, and writes nowhere: AccessDenied as S3 answers", async () => {
    const { s3 } = as(CLEANUP);
    await s3.send(
      new DeleteObjectCommand({ Bucket: config.checkpointBucket, Key: `payloads/${crypto.randomUUID()}` }),
    );
    const put = await refusal(
      s3.send(
        new PutObjectCommand({
          Bucket: config.checkpointBucket,
          Key: `payloads/${crypto.randomUUID()}`,
          Body: "x",
        }),
      ),
    );
    expect(put).toMatchObject({ name: "AccessDenied", status: 403 });
    const outside = await refusal(
      s3.send(
        new DeleteObjectCommand({ Bucket: config.checkpointBucket, Key: `threads/${crypto.randomUUID()}` }),
      ),
    );
    expect(outside).toMatchObject({ name: "AccessDenied", status: 403 });
  });

  it("a presigned URL made with a role's keys works through the proxy as far as the role may go, and no further", async () => {
    // The build exchange and the runs' attachments hand presigned URLs to others (the build step, a browser).
    const { s3 } = as("Task-RevisionBuildStart");
    const bucket = config.artifactBucket;
    const key = `artifacts/${crypto.randomUUID()}/artifact.json.gz`;
    const put = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 60 });
    expect(new URL(put).origin).toBe(proxy.url);
    const putRes = await fetch(put, { method: "PUT", body: "built" });
    expect(putRes.status, `${put} ${await putRes.clone().text()}`).toBe(200);
    const get = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 60 });
    const got = await fetch(get);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe("built");
    // Changed after signing, expired, or for what the role may not do: refused as S3 refuses.
    expect((await fetch(get.replace(key, `${key}x`))).status).toBe(403);
    const expired = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
      expiresIn: 1,
      signingDate: new Date(Date.now() - 10_000),
    });
    const late = await fetch(expired);
    expect(late.status).toBe(403);
    expect(await late.text()).toContain("Request has expired");
    const { s3: cleanup } = as(CLEANUP);
    const notAllowed = await getSignedUrl(
      cleanup,
      new PutObjectCommand({ Bucket: config.checkpointBucket, Key: `payloads/${crypto.randomUUID()}` }),
      { expiresIn: 60 },
    );
    const denied = await fetch(notAllowed, { method: "PUT", body: "x" });
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain("AccessDenied");
  });

  it("the tracing API's role reaches the runs, not agent state (the checkpoints table)", async () => {
    const { ddb } = as("PlatformRunsGet");
    await ddb.send(new GetItemCommand({ TableName: RUNS, Key: { PK: S("TEST#none"), SK: S("none") } }));
    const denied = await refusal(
      ddb.send(new GetItemCommand({ TableName: tableName("checkpoints"), Key: { PK: S("x"), SK: S("x") } })),
    );
    expect(denied.name).toBe("AccessDeniedException");
  });

  it("the health check's role reaches no table", async () => {
    const { ddb } = as("SystemOk");
    const denied = await refusal(
      ddb.send(new GetItemCommand({ TableName: MAIN, Key: { PK: S("x"), SK: S("x") } })),
    );
    expect(denied.name).toBe("AccessDeniedException");
  });

  it("only the groups that seal secrets may take a data key of the secrets key", async () => {
    const context = { tenant_id: `t-${crypto.randomUUID()}` };
    const req = () =>
      new GenerateDataKeyCommand({
        KeyId: config.secretsKeyId,
        KeySpec: "AES_256",
        EncryptionContext: context,
      });
    const sealed = await as("Task-ExportPartition").kms.send(req());
    expect(sealed.CiphertextBlob?.length).toBeGreaterThan(0);
    const denied = await refusal(as("AgentRouter").kms.send(req()));
    expect(denied.name).toBe("AccessDeniedException");
  });

  it("the control plane starts revision pipelines, not bulk exports: AccessDenied", async () => {
    const start = new StartExecutionCommand({
      stateMachineArn: localStateMachineArn("bulk-export"),
      name: crypto.randomUUID(),
      input: "{}",
    });
    const denied = await refusal(as("ControlDeploymentsCreate").sfn.send(start));
    expect(denied.name).toBe("AccessDeniedException");
    expect(denied.message).toContain("states:StartExecution");
  });
});
