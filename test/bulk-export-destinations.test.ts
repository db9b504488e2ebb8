import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { HeadBucketCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../infra/local/http-util.ts";
import { dynamo } from "../shared/aws/clients.ts";
import { tableName } from "../shared/tables.ts";
import { call, facts } from "./helpers/cloud.ts";
import { newBucket, newWorkspace, s3For } from "./helpers/export.ts";

// Destinations over HTTP against the local S3: a write test at creation, write-only credentials.
const PATH = "/api/v1/bulk-exports/destinations";
const SECRET = facts.s3.secret_access_key;
let ws: Awaited<ReturnType<typeof newWorkspace>>;
beforeAll(async () => {
  ws = await newWorkspace();
});

const body = (bucket: string, over: Record<string, unknown> = {}, config: Record<string, unknown> = {}) => ({
  destination_type: "s3",
  display_name: `d-${bucket}`,
  config: { bucket_name: bucket, prefix: "/traces/", endpoint_url: facts.s3.endpoint, ...config },
  credentials: { access_key_id: facts.s3.access_key_id, secret_access_key: SECRET },
  ...over,
});

describe("bulk export destinations", () => {
  it("creates after a write test that leaves nothing behind; credentials are never shown nor stored in clear", async () => {
    const bucket = await newBucket(facts, "dest");
    const r = await call("POST", PATH, { headers: ws.headers, body: body(bucket) });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      destination_type: "s3",
      tenant_id: ws.tenant,
      config: {
        bucket_name: bucket,
        prefix: "traces",
        endpoint_url: facts.s3.endpoint,
        include_bucket_in_prefix: false,
      },
      credentials_keys: ["access_key_id", "secret_access_key"],
    });
    expect(r.text).not.toContain(SECRET);
    const listed = await call("GET", PATH, { headers: ws.headers });
    const got = await call("GET", `${PATH}/${r.json.id}`, { headers: ws.headers });
    expect(got.json).toEqual(r.json);
    expect(listed.json[0]).toEqual(r.json);
    for (const text of [listed.text, got.text]) expect(text).not.toContain(SECRET);
    const objects = await s3For(facts).send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(objects.Contents ?? []).toEqual([]);
    const item = await dynamo().send(
      new GetItemCommand({
        TableName: tableName("main"),
        Key: { PK: { S: `T#${ws.tenant}#BULKEXPORTDEST` }, SK: { S: r.json.id } },
      }),
    );
    expect(item.Item).toBeDefined();
    expect(JSON.stringify(item.Item)).not.toContain(SECRET);
    expect(item.Item!.credentials_sealed).toBeDefined();
  });

  it("accepts the spec's objstore type and no credentials (the default chain)", async () => {
    const bucket = await newBucket(facts, "dest");
    const r = await call("POST", PATH, {
      headers: ws.headers,
      body: body(bucket, { destination_type: "objstore", credentials: undefined }),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.destination_type).toBe("s3");
    expect(r.json.credentials_keys).toEqual([]);
  });

  it("a bucket that does not exist is 400 'Bucket is not valid', and no bucket gets created", async () => {
    const bucket = `missing-${crypto.randomUUID().slice(0, 8)}`;
    const r = await call("POST", PATH, { headers: ws.headers, body: body(bucket) });
    expect(r.status).toBe(400);
    expect(r.json.detail).toBe("Bucket is not valid");
    await expect(s3For(facts).send(new HeadBucketCommand({ Bucket: bucket }))).rejects.toThrow();
  });

  it("an endpoint with nothing listening is 400 'Invalid endpoint'", async () => {
    const port = await freePort();
    const r = await call("POST", PATH, {
      headers: ws.headers,
      body: body("whatever-bucket", {}, { endpoint_url: `http://127.0.0.1:${port}` }),
    });
    expect(r.status).toBe(400);
    expect(r.json.detail).toBe("Invalid endpoint");
  });

  it.each([
    ["destination_type", { destination_type: "gcs" }, {}],
    ["config.bucket_name", {}, { bucket_name: "Not_A_Bucket" }],
    ["config.endpoint_url", {}, { endpoint_url: "ftp://127.0.0.1:21" }],
    ["credentials.secret_access_key", { credentials: { access_key_id: "x" } }, {}],
    ["display_name", { display_name: "" }, {}],
  ])("a bad %s is a 422 naming it", async (field, over, config) => {
    const r = await call("POST", PATH, { headers: ws.headers, body: body("b-okay", over, config) });
    expect(r.status, r.text).toBe(422);
    expect(r.json.detail.map((d: any) => d.loc.slice(1).join("."))).toContain(field);
  });

  it("another workspace's destination is a 404 and is not listed", async () => {
    const bucket = await newBucket(facts, "dest");
    const mine = (await call("POST", PATH, { headers: ws.headers, body: body(bucket) })).json;
    const other = await newWorkspace();
    expect((await call("GET", `${PATH}/${mine.id}`, { headers: other.headers })).status).toBe(404);
    expect((await call("GET", PATH, { headers: other.headers })).json).toEqual([]);
  });
});
