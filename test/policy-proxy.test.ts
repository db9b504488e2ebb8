import {
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localRuntimeScope, mintRuntimeCredentials } from "../infra/local/policy-proxy/credentials.ts";
import { dynamo, s3 } from "../shared/aws/clients.ts";
import { config } from "../shared/config.ts";
import {
  type PolicyDocument,
  runtimeKeyPrefixes,
  runtimePolicy,
} from "../shared/containment/runtime-policy.ts";
import { tableName } from "../shared/tables.ts";
import "./helpers/cloud.ts";
import { runtimePrincipal, startRuntimeProxy } from "./helpers/runtime-proxy.ts";

// Issue 25 (2): on the local cloud a runtime's DynamoDB and S3 calls go through the policy proxy, which enforces
// the very policy the deploy step gives the runtime's role in AWS, and refuses as AWS does.
const tenant = `t-${crypto.randomUUID()}`;
const deployment = crypto.randomUUID();
const other = crypto.randomUUID();
const prefixes = runtimeKeyPrefixes(tenant, deployment);
const MAIN = tableName("main");
const CHECKPOINTS = tableName("checkpoints");
const RUNS = tableName("runs");

/** The generated policy, with the Deny on index-key attributes added when this branch's policy lacks one. */
function policyWithIndexKeyDeny(): PolicyDocument {
  const p = runtimePolicy(localRuntimeScope(tenant, deployment));
  if (p.Statement.some((s) => s.Effect === "Deny")) return p;
  const scope = localRuntimeScope(tenant, deployment);
  return {
    ...p,
    Statement: [
      ...p.Statement,
      {
        Sid: "NoIndexKeys",
        Effect: "Deny",
        Action: ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"],
        Resource: [scope.tables.main],
        Condition: { "ForAnyValue:StringEquals": { "dynamodb:Attributes": ["GSI1PK", "GSI1SK"] } },
      },
    ],
  };
}

const runtime = runtimePrincipal(tenant, deployment, policyWithIndexKeyDeny());
const creds = { accessKeyId: runtime.accessKeyId, secretAccessKey: runtime.secretAccessKey };
let proxy: Awaited<ReturnType<typeof startRuntimeProxy>>;
let ddb: DynamoDBClient;
let bucket: S3Client;
let endpoint: string;

const clients = (credentials: { accessKeyId: string; secretAccessKey: string }) => ({
  ddb: new DynamoDBClient({ endpoint, region: config.region, credentials, maxAttempts: 1 }),
  s3: new S3Client({
    endpoint,
    region: config.region,
    credentials,
    forcePathStyle: true,
    maxAttempts: 1,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  }),
});

beforeAll(async () => {
  proxy = await startRuntimeProxy(runtime);
  endpoint = proxy.endpoint;
  ({ ddb, s3: bucket } = clients(creds));
});
afterAll(async () => {
  ddb.destroy();
  bucket.destroy();
  await proxy.close();
});

const S = (s: string) => ({ S: s });
const own = (sk: string) => ({ PK: S(`${prefixes.main}THREAD`), SK: S(sk) });
const platformRead = async (table: string, key: Record<string, { S: string }>) =>
  (await dynamo().send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

async function refused(p: Promise<unknown>, name: string): Promise<string> {
  const err = (await p.then(
    () => undefined,
    (e) => e,
  )) as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  expect(err, "the call should have been refused").toBeDefined();
  expect(err?.name).toBe(name);
  return String(err?.message);
}

describe("a runtime through the policy proxy", () => {
  it("gets, puts, updates, queries, batch-writes and transacts items of its own partitions", async () => {
    await ddb.send(new PutItemCommand({ TableName: MAIN, Item: { ...own("a"), v: S("1") } }));
    await ddb.send(
      new UpdateItemCommand({
        TableName: MAIN,
        Key: own("a"),
        UpdateExpression: "SET #v = :v, w = :w",
        ExpressionAttributeNames: { "#v": "v" },
        ExpressionAttributeValues: { ":v": S("2"), ":w": S("x") },
      }),
    );
    const got = await ddb.send(new GetItemCommand({ TableName: MAIN, Key: own("a"), ConsistentRead: true }));
    expect(got.Item?.v).toEqual(S("2"));
    await ddb.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [MAIN]: [{ PutRequest: { Item: own("b") } }, { PutRequest: { Item: own("c") } }],
          [CHECKPOINTS]: [{ PutRequest: { Item: { PK: S(`${prefixes.checkpoints}th`), SK: S("1") } } }],
        },
      }),
    );
    await ddb.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: CHECKPOINTS, Item: { PK: S(`${prefixes.checkpoints}th`), SK: S("2") } } },
          { Delete: { TableName: MAIN, Key: own("c") } },
          { ConditionCheck: { TableName: MAIN, Key: own("a"), ConditionExpression: "attribute_exists(PK)" } },
        ],
      }),
    );
    const q = await ddb.send(
      new QueryCommand({
        TableName: MAIN,
        KeyConditionExpression: "#pk = :pk AND SK BETWEEN :a AND :z",
        ExpressionAttributeNames: { "#pk": "PK" },
        ExpressionAttributeValues: { ":pk": S(`${prefixes.main}THREAD`), ":a": S("a"), ":z": S("z") },
        ConsistentRead: true,
      }),
    );
    expect(q.Items?.map((i) => i.SK.S)).toEqual(["a", "b"]);
    expect(await platformRead(CHECKPOINTS, { PK: S(`${prefixes.checkpoints}th`), SK: S("2") })).toBeDefined();
  });

  it("reads and writes S3 objects under its own checkpoints prefix", async () => {
    const Key = `${prefixes.blobs}thread/x`;
    await bucket.send(new PutObjectCommand({ Bucket: config.checkpointBucket, Key, Body: "hello" }));
    const out = await bucket.send(new GetObjectCommand({ Bucket: config.checkpointBucket, Key }));
    expect(await out.Body?.transformToString()).toBe("hello");
    await bucket.send(
      new DeleteObjectsCommand({ Bucket: config.checkpointBucket, Delete: { Objects: [{ Key }] } }),
    );
  });

  it("is refused another deployment's partition, another tenant's, a platform record, with nothing written", async () => {
    const others = [
      `${runtimeKeyPrefixes(tenant, other).main}THREAD`,
      `${runtimeKeyPrefixes(`t-${other}`, deployment).main}THREAD`,
      `TENANT#${tenant}`,
      `${prefixes.main.slice(0, -1)}0#THREAD`, // a deployment id that only starts like this one
    ];
    for (const pk of others) {
      const message = await refused(
        ddb.send(new PutItemCommand({ TableName: MAIN, Item: { PK: S(pk), SK: S("x") } })),
        "AccessDeniedException",
      );
      expect(message).toBe(
        `User: ${runtime.arn} is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:${config.region}:000000000000:table/${MAIN} because no identity-based policy allows the dynamodb:PutItem action`,
      );
      expect(await platformRead(MAIN, { PK: S(pk), SK: S("x") })).toBeUndefined();
    }
    await refused(
      ddb.send(
        new PutItemCommand({
          TableName: CHECKPOINTS,
          Item: { PK: S(`${runtimeKeyPrefixes(tenant, other).checkpoints}t`), SK: S("x") },
        }),
      ),
      "AccessDeniedException",
    );
    // One foreign item in a batch or a transaction refuses the whole call.
    await refused(
      ddb.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [MAIN]: [
              { PutRequest: { Item: own("d") } },
              { PutRequest: { Item: { PK: S(others[0]), SK: S("d") } } },
            ],
          },
        }),
      ),
      "AccessDeniedException",
    );
    await refused(
      ddb.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName: MAIN, Item: own("e") } },
            { Put: { TableName: MAIN, Item: { PK: S(others[2]), SK: S("e") } } },
          ],
        }),
      ),
      "AccessDeniedException",
    );
    expect(await platformRead(MAIN, own("d"))).toBeUndefined();
    expect(await platformRead(MAIN, own("e"))).toBeUndefined();
    await refused(
      ddb.send(new GetItemCommand({ TableName: MAIN, Key: { PK: S(others[0]), SK: S("x") } })),
      "AccessDeniedException",
    );
    await refused(
      ddb.send(
        new QueryCommand({
          TableName: MAIN,
          KeyConditionExpression: "PK = :p",
          ExpressionAttributeValues: { ":p": S(others[1]) },
        }),
      ),
      "AccessDeniedException",
    );
  });

  it("is refused the runs table and a Scan", async () => {
    await refused(ddb.send(new PutItemCommand({ TableName: RUNS, Item: own("r") })), "AccessDeniedException");
    expect(await platformRead(RUNS, own("r"))).toBeUndefined();
    await refused(ddb.send(new ScanCommand({ TableName: MAIN })), "AccessDeniedException");
  });

  it("is refused writing index key attributes, even on its own items (explicit deny)", async () => {
    const message = await refused(
      ddb.send(
        new PutItemCommand({ TableName: MAIN, Item: { ...own("g"), GSI1PK: S("DEPLOYMENT#victim") } }),
      ),
      "AccessDeniedException",
    );
    expect(message).toMatch(/with an explicit deny in an identity-based policy$/);
    await refused(
      ddb.send(
        new UpdateItemCommand({
          TableName: MAIN,
          Key: own("a"),
          UpdateExpression: "SET #g = :g",
          ExpressionAttributeNames: { "#g": "GSI1SK" },
          ExpressionAttributeValues: { ":g": S("x") },
        }),
      ),
      "AccessDeniedException",
    );
    expect(await platformRead(MAIN, own("g"))).toBeUndefined();
    expect((await platformRead(MAIN, own("a")))?.GSI1SK).toBeUndefined();
  });

  it("is refused S3 objects outside its own prefix", async () => {
    const foreign = `checkpoints/${encodeURIComponent(`${tenant}#${other}`)}/thread/x`;
    await refused(
      bucket.send(new PutObjectCommand({ Bucket: config.checkpointBucket, Key: foreign, Body: "x" })),
      "AccessDenied",
    );
    await refused(
      bucket.send(new GetObjectCommand({ Bucket: config.artifactBucket, Key: "artifacts/secret" })),
      "AccessDenied",
    );
    await refused(
      bucket.send(
        new DeleteObjectsCommand({
          Bucket: config.checkpointBucket,
          Delete: { Objects: [{ Key: `${prefixes.blobs}a` }, { Key: foreign }] },
        }),
      ),
      "AccessDenied",
    );
    await expect(
      s3().send(new GetObjectCommand({ Bucket: config.checkpointBucket, Key: foreign })),
    ).rejects.toThrow();
  });

  it("refuses a request signed with a wrong secret or an unknown key", async () => {
    const wrong = clients({
      accessKeyId: creds.accessKeyId,
      secretAccessKey: mintRuntimeCredentials().secretAccessKey,
    });
    await refused(
      wrong.ddb.send(new PutItemCommand({ TableName: MAIN, Item: own("w") })),
      "InvalidSignatureException",
    );
    await refused(
      wrong.s3.send(
        new PutObjectCommand({ Bucket: config.checkpointBucket, Key: `${prefixes.blobs}w`, Body: "x" }),
      ),
      "SignatureDoesNotMatch",
    );
    const unknown = clients(mintRuntimeCredentials());
    await refused(
      unknown.ddb.send(new GetItemCommand({ TableName: MAIN, Key: own("a") })),
      "UnrecognizedClientException",
    );
    await refused(
      unknown.s3.send(new GetObjectCommand({ Bucket: config.checkpointBucket, Key: `${prefixes.blobs}w` })),
      "InvalidAccessKeyId",
    );
    expect(await platformRead(MAIN, own("w"))).toBeUndefined();
  });
});
