import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { HeadBucketCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newBucket, newWorkspace, s3For, s3Proxy } from "../harness/export.ts";
import { freePort } from "../infra/local/http-util.ts";
import { dynamo } from "../shared/aws/clients.ts";
import { type Sealed, unsealRecord } from "../shared/crypto/envelope.ts";
import { DestinationError } from "../shared/errors.ts";
import { openDestination } from "../shared/export/destinations.ts";
import { tableName } from "../shared/tables.ts";
import { call, customer, facts } from "./helpers/cloud.ts";

// Destinations over HTTP against a workspace's own S3 (harness/customer-s3.ts): a write test at creation, write-only
// credentials. The platform's own S3 is refused as a destination (test/export-breakout.test.ts).
const PATH = "/api/v1/bulk-exports/destinations";
const KEY_ID = customer.s3.access_key_id;
const SECRET = customer.s3.secret_access_key;
/** Forbidden, missing and elsewhere-redirected buckets answer alike (no telling whether another's bucket exists). */
const BUCKET_ACCESS =
  "Access denied or bucket is not valid: the bucket must exist (in the region given) and the credentials must be allowed to write to it";
const WRITE_TEST = /tmp\/\.agent-platform-write-test-[0-9a-f-]{36}$/;
let ws: Awaited<ReturnType<typeof newWorkspace>>;
beforeAll(async () => {
  ws = await newWorkspace();
});

const body = (bucket: string, over: Record<string, unknown> = {}, config: Record<string, unknown> = {}) => ({
  destination_type: "s3",
  display_name: `d-${bucket}`,
  config: { bucket_name: bucket, prefix: "/traces/", endpoint_url: customer.s3.endpoint, ...config },
  credentials: { access_key_id: KEY_ID, secret_access_key: SECRET },
  ...over,
});
const create = (b: unknown, headers = ws.headers) => call("POST", PATH, { headers, body: b });

async function keysIn(bucket: string, prefix?: string): Promise<string[]> {
  const out = await s3For(customer).send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

/** The stored item, read straight from DynamoDB. */
async function storedItem(tenant: string, id: string) {
  const got = await dynamo().send(
    new GetItemCommand({
      TableName: tableName("main"),
      Key: { PK: { S: `T#${tenant}#BULKEXPORTDEST` }, SK: { S: id } },
    }),
  );
  return got.Item;
}

/**
 * An endpoint in front of the workspace's S3 that records each request (method and path) and can answer a request
 * itself: S3 faults s3rver cannot produce (it checks no credentials), or answers that are not S3's at all.
 */
interface Recorder {
  endpoint: string;
  readonly seen: string[];
  answer?: (method: string, path: string) => { status: number; body?: string; type?: string } | undefined;
  close(): Promise<void>;
}
const recorders: Recorder[] = [];
afterAll(async () => {
  await Promise.all(recorders.map((r) => r.close()));
});
async function recorder(target = customer.s3.endpoint): Promise<Recorder> {
  const proxy = await s3Proxy(target);
  const pathOf = (url: string) => decodeURIComponent(url.split("?")[0]);
  const state: Recorder = {
    endpoint: proxy.endpoint,
    get seen() {
      return proxy.requests.map((r) => {
        const [method, url] = r.split(" ");
        return `${method} ${pathOf(url)}`;
      });
    },
    close: () => proxy.close(),
  };
  proxy.inject = (req) => {
    const own = state.answer?.(req.method ?? "", pathOf(req.url ?? ""));
    return (
      own && {
        kind: "recorder",
        status: own.status,
        contentType: own.type ?? "application/xml",
        body: own.body ?? "",
      }
    );
  };
  recorders.push(state);
  return state;
}
const s3Error = (code: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message><RequestId>R1</RequestId></Error>`;

describe("bulk export destinations", () => {
  it("creates after a write test that leaves nothing behind; credentials are never shown nor stored in clear", async () => {
    const bucket = await newBucket(customer, "dest");
    const r = await create(body(bucket));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: ws.tenant,
      destination_type: "s3",
      display_name: `d-${bucket}`,
      config: {
        bucket_name: bucket,
        prefix: "traces",
        region: null,
        endpoint_url: customer.s3.endpoint,
        include_bucket_in_prefix: false,
      },
      created_at: expect.any(String),
      updated_at: expect.any(String),
      credentials_keys: ["access_key_id", "secret_access_key"],
    });
    expect(r.text).not.toContain(SECRET);
    expect(r.text).not.toContain(`"${KEY_ID}"`);
    const listed = await call("GET", PATH, { headers: ws.headers });
    const got = await call("GET", `${PATH}/${r.json.id}`, { headers: ws.headers });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
    expect(listed.json.find((d: any) => d.id === r.json.id)).toEqual(r.json);
    for (const text of [listed.text, got.text]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain("credentials_sealed");
    }
    expect(await keysIn(bucket)).toEqual([]);

    const item = await storedItem(ws.tenant, r.json.id);
    expect(item).toBeDefined();
    expect(JSON.stringify(item)).not.toContain(SECRET);
    expect(item!.credentials_sealed?.M).toBeDefined();
    // The sealed credentials open only with their own tenant and destination as the encryption context.
    const sealed = unmarshall(item!).credentials_sealed as Sealed;
    await expect(
      unsealRecord(sealed, { tenant_id: ws.tenant, record: `bulk-export-destination/${r.json.id}` }),
    ).resolves.toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });
    await expect(
      unsealRecord(sealed, {
        tenant_id: crypto.randomUUID(),
        record: `bulk-export-destination/${r.json.id}`,
      }),
    ).rejects.toThrow();
  });

  it("the platform's own bucket on its own S3 is refused, with its keys or without any", async () => {
    const prefix = `dest-${crypto.randomUUID().slice(0, 8)}`;
    const platformS3 = { endpoint_url: facts.s3.endpoint, prefix };
    const own = {
      credentials: { access_key_id: facts.s3.access_key_id, secret_access_key: facts.s3.secret_access_key },
    };
    for (const over of [own, {}, { credentials: undefined }]) {
      const r = await create(body(facts.s3.bucket, over, platformS3));
      expect(r.status, r.text).toBe(422);
    }
  });

  it("accepts the spec's objstore type and stores s3", async () => {
    const bucket = await newBucket(customer, "dest");
    const r = await create(body(bucket, { destination_type: "objstore" }));
    expect(r.status, r.text).toBe(200);
    expect(r.json.destination_type).toBe("s3");
    const item = await storedItem(ws.tenant, r.json.id);
    expect(item!.destination_type.S).toBe("s3");
  });

  it("without credentials a destination is a 422 and nothing is sent to the bucket: the platform's own credentials never write for a workspace", async () => {
    const bucket = await newBucket(customer, "dest");
    const rec = await recorder();
    for (const credentials of [undefined, null]) {
      const r = await create(body(bucket, { credentials }, { endpoint_url: rec.endpoint }));
      expect(r.status, r.text).toBe(422);
      expect(r.json.detail).toEqual([
        expect.objectContaining({
          loc: ["body", "credentials"],
          type: "missing",
          msg: expect.stringMatching(/credentials are required/),
        }),
      ]);
    }
    expect(rec.seen).toEqual([]);
    expect(await keysIn(bucket)).toEqual([]);
    expect(
      (await call("GET", PATH, { headers: ws.headers })).json.map(
        (d: { config: { bucket_name: string } }) => d.config.bucket_name,
      ),
    ).not.toContain(bucket);
  });

  it("a session token is stored sealed and named in credentials_keys", async () => {
    const bucket = await newBucket(customer, "dest");
    const token = `tok-${crypto.randomUUID()}`;
    const r = await create(
      body(bucket, {
        credentials: { access_key_id: KEY_ID, secret_access_key: SECRET, session_token: token },
      }),
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.credentials_keys).toEqual(["access_key_id", "secret_access_key", "session_token"]);
    expect(r.text).not.toContain(token);
    expect(JSON.stringify(await storedItem(ws.tenant, r.json.id))).not.toContain(token);
  });

  it.each([
    [false, (_bucket: string) => "traces/nested"],
    [true, (bucket: string) => `${bucket}/traces/nested`],
  ])(
    "include_bucket_in_prefix %s: the write test goes under the root, which the exporter gets",
    async (include, rootOf) => {
      const bucket = await newBucket(customer, "dest");
      const root = rootOf(bucket);
      const rec = await recorder();
      const r = await create(
        body(
          bucket,
          {},
          { endpoint_url: rec.endpoint, prefix: "/traces/nested/", include_bucket_in_prefix: include },
        ),
      );
      expect(r.status, r.text).toBe(200);
      expect(r.json.config).toMatchObject({ prefix: "traces/nested", include_bucket_in_prefix: include });
      // Path style: /<bucket>/<key>.
      const [put, del, ...more] = rec.seen;
      expect(more).toEqual([]);
      expect(put).toMatch(new RegExp(`^PUT /${bucket}/${root}/${WRITE_TEST.source}`));
      expect(del).toBe(put.replace(/^PUT/, "DELETE"));
      expect(await keysIn(bucket)).toEqual([]);

      const dest = await openDestination(ws.tenant, r.json.id);
      expect(dest.bucket).toBe(bucket);
      expect(dest.root).toBe(root);
      expect(dest.destination).toEqual(r.json);
      await dest.client.send(
        new PutObjectCommand({ Bucket: dest.bucket, Key: `${dest.root}/probe.txt`, Body: "x" }),
      );
      expect(await keysIn(bucket)).toEqual([`${root}/probe.txt`]);
      dest.client.destroy();
    },
  );

  it("when the key may not delete, the test object stays under <root>/tmp/ and creation succeeds", async () => {
    const bucket = await newBucket(customer, "dest");
    const rec = await recorder();
    rec.answer = (method) =>
      method === "DELETE" ? { status: 403, body: s3Error("AccessDenied") } : undefined;
    const r = await create(body(bucket, {}, { endpoint_url: rec.endpoint }));
    expect(r.status, r.text).toBe(200);
    const left = await keysIn(bucket);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(new RegExp(`^traces/${WRITE_TEST.source}`));
  });

  it.each([
    ["InvalidAccessKeyId", 403, "Key ID you provided does not exist"],
    ["AccessDenied", 403, BUCKET_ACCESS],
    ["SignatureDoesNotMatch", 403, BUCKET_ACCESS],
    ["NoSuchBucket", 404, BUCKET_ACCESS],
    ["PermanentRedirect", 301, BUCKET_ACCESS],
  ])("an S3 %s on the write test is 400 %j, and nothing is stored", async (code, status, detail) => {
    const other = await newWorkspace();
    const rec = await recorder();
    rec.answer = () => ({ status, body: s3Error(code) });
    const r = await create(body("some-bucket", {}, { endpoint_url: rec.endpoint }), other.headers);
    expect(r.status, r.text).toBe(400);
    expect(r.json).toEqual({ detail });
    expect((await call("GET", PATH, { headers: other.headers })).json).toEqual([]);
  });

  it("a bucket that does not exist is 400 with the message a forbidden one gets, and no bucket gets created", async () => {
    const bucket = `missing-${crypto.randomUUID().slice(0, 8)}`;
    const r = await create(body(bucket));
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ detail: BUCKET_ACCESS });
    await expect(s3For(customer).send(new HeadBucketCommand({ Bucket: bucket }))).rejects.toThrow();
  });

  it("an endpoint with nothing listening is 400 'Invalid endpoint'", async () => {
    const port = await freePort();
    const started = Date.now();
    const r = await create(body("whatever-bucket", {}, { endpoint_url: `http://127.0.0.1:${port}` }));
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ detail: "Invalid endpoint" });
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it.each([
    ["an HTML 404", { status: 404, body: "<html>not here</html>", type: "text/html" }],
    ["a 200 without ETag", { status: 200, body: "<html>ok</html>", type: "text/html" }],
    ["a JSON 400", { status: 400, body: '{"error":"no"}', type: "application/json" }],
  ])("an endpoint that is not S3 (%s) is 400 'Invalid endpoint'", async (_label, answer) => {
    const rec = await recorder();
    rec.answer = () => answer;
    const r = await create(body("whatever-bucket", {}, { endpoint_url: rec.endpoint }));
    expect(r.status, r.text).toBe(400);
    expect(r.json).toEqual({ detail: "Invalid endpoint" });
  });

  it.each([
    ["destination_type", { destination_type: "gcs" }, {}],
    ["config.bucket_name", {}, { bucket_name: "Not_A_Bucket" }],
    ["config.endpoint_url", {}, { endpoint_url: "ftp://127.0.0.1:21" }],
    ["config.endpoint_url", {}, { endpoint_url: "http://user:pw@127.0.0.1:9" }],
    ["config.region", {}, { region: "not a region" }],
    ["config.include_bucket_in_prefix", {}, { include_bucket_in_prefix: "yes" }],
    ["credentials.secret_access_key", { credentials: { access_key_id: "x" } }, {}],
    ["display_name", { display_name: "" }, {}],
    ["display_name", { display_name: "x".repeat(256) }, {}],
  ])("a bad %s is a 422 naming it", async (field, over, config) => {
    const r = await create(body("b-okay", over, config));
    expect(r.status, r.text).toBe(422);
    expect(r.json.detail.map((d: any) => d.loc.join("."))).toContain(`body.${field}`);
  });

  it("a missing config is a 422 at body.config", async () => {
    const r = await create({ destination_type: "s3", display_name: "x" });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: any) => d.loc.join("."))).toContain("body.config");
  });

  it("lists newest first; an unknown id is a 404", async () => {
    const own = await newWorkspace();
    const bucket = await newBucket(customer, "dest");
    const first = (await create(body(bucket, { display_name: "first" }), own.headers)).json;
    await new Promise((r) => setTimeout(r, 5));
    const second = (await create(body(bucket, { display_name: "second" }), own.headers)).json;
    const listed = await call("GET", PATH, { headers: own.headers });
    expect(listed.status).toBe(200);
    expect(listed.json.map((d: any) => d.id)).toEqual([second.id, first.id]);
    expect((await call("GET", `${PATH}/${crypto.randomUUID()}`, { headers: own.headers })).status).toBe(404);
  });

  it("another workspace's destination is a 404, is not listed and cannot be opened", async () => {
    const bucket = await newBucket(customer, "dest");
    const mine = (await create(body(bucket))).json;
    const other = await newWorkspace();
    const got = await call("GET", `${PATH}/${mine.id}`, { headers: other.headers });
    expect(got.status).toBe(404);
    expect(got.text).not.toContain(bucket);
    expect((await call("GET", PATH, { headers: other.headers })).json).toEqual([]);
    await expect(openDestination(other.tenant, mine.id)).rejects.toBeInstanceOf(DestinationError);
  });
});
