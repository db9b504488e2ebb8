import { createHash } from "node:crypto";
import { request } from "node:http";
import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryOf, signer } from "../infra/local/policy-proxy/sigv4.ts";
import { s3 } from "../shared/aws/clients.ts";
import { config } from "../shared/config.ts";
import { runtimeKeyPrefixes } from "../shared/containment/runtime-policy.ts";
import "./helpers/cloud.ts";
import { runtimePrincipal, startRuntimeProxy } from "./helpers/runtime-proxy.ts";

// Issue 33 (2, 3): a graph signs with its own runtime's credentials (it runs in the signer's process) and names
// another workspace's objects in forms the policy proxy could read as its own while s3rver resolves them
// elsewhere: a copy source's `?…/..` suffix, an entity he.decode turns into `..`, escapes s3rver leaves encoded.
// Each is refused by the proxy, and nothing of the other workspace is copied, read or deleted.
const tenant = `t-${crypto.randomUUID()}`;
const deployment = crypto.randomUUID();
const victimTenant = `t-${crypto.randomUUID()}`;
const victimDeployment = crypto.randomUUID();
const prefixes = runtimeKeyPrefixes(tenant, deployment);
const victimBlobs = runtimeKeyPrefixes(victimTenant, victimDeployment).blobs;
/** Another workspace's artifact manifest (the live finding: it held a plaintext `.env` key). */
const MANIFEST = `runtimes/${victimTenant}/${victimDeployment}/manifest.json`;
const VICTIM_BLOB = `${victimBlobs}thread/secret`;
const OWN_ARTIFACTS = `runtimes/${tenant}/${deployment}/`;

const runtime = runtimePrincipal(tenant, deployment);
const creds = { accessKeyId: runtime.accessKeyId, secretAccessKey: runtime.secretAccessKey };
let proxy: Awaited<ReturnType<typeof startRuntimeProxy>>;
let endpoint: URL;
let graph: S3Client;

beforeAll(async () => {
  proxy = await startRuntimeProxy(runtime);
  endpoint = new URL(proxy.endpoint);
  graph = new S3Client({
    endpoint: String(endpoint),
    region: config.region,
    credentials: creds,
    forcePathStyle: true,
    maxAttempts: 1,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  await s3().send(
    new PutObjectCommand({ Bucket: config.artifactBucket, Key: MANIFEST, Body: "ENV_KEY=secret" }),
  );
  await s3().send(
    new PutObjectCommand({ Bucket: config.checkpointBucket, Key: VICTIM_BLOB, Body: "secret" }),
  );
});
afterAll(async () => {
  graph.destroy();
  await proxy.close();
});

/** The HTTP status of a call the proxy should refuse (0 when it went through). */
async function status(p: Promise<unknown>): Promise<number> {
  return p.then(
    () => 0,
    (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode ?? -1,
  );
}
/** A request signed with the runtime's credentials, its target and body sent exactly as given. */
async function signedRaw(method: string, target: string, body = "", extra: Record<string, string> = {}) {
  const headers = {
    host: endpoint.host,
    "x-amz-content-sha256": createHash("sha256").update(body).digest("hex"),
    ...extra,
  };
  const signed = await signer("s3", config.region, creds).sign({
    method,
    protocol: "http:",
    hostname: endpoint.hostname,
    port: Number(endpoint.port),
    path: target.split("?")[0],
    query: queryOf(target),
    headers,
    body,
  });
  return new Promise<number>((resolve, reject) => {
    const req = request(
      { hostname: endpoint.hostname, port: endpoint.port, method, path: target, headers: signed.headers },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
const exists = (Bucket: string, Key: string) =>
  s3()
    .send(new HeadObjectCommand({ Bucket, Key }))
    .then(
      () => true,
      () => false,
    );
const climb = (from: string) => "../".repeat(from.split("/").length);

describe("a graph naming another workspace's objects through the policy proxy", () => {
  it("CopyObject with a copy source that climbs out of its own prefix after `?` is refused, nothing copied", async () => {
    const own = `${OWN_ARTIFACTS}x?`;
    const CopySource = `${config.artifactBucket}/${own}/${climb(own)}${MANIFEST}`;
    const Key = `${prefixes.blobs}stolen`;
    const code = await status(
      graph.send(new CopyObjectCommand({ Bucket: config.checkpointBucket, Key, CopySource })),
    );
    expect(code).toBe(400);
    expect(await exists(config.checkpointBucket, Key)).toBe(false);
  });

  it("a copy source with a version suffix or an escaped reserved character is refused, nothing copied", async () => {
    const Key = `${prefixes.blobs}stolen-2`;
    for (const CopySource of [
      `${config.artifactBucket}/${OWN_ARTIFACTS}a?versionId=${encodeURIComponent(`/${climb(OWN_ARTIFACTS)}${MANIFEST}`)}`,
      `${config.artifactBucket}/${OWN_ARTIFACTS}a%3F/${climb(`${OWN_ARTIFACTS}a`)}${MANIFEST}`,
      `${config.artifactBucket}/${OWN_ARTIFACTS}a%2F..%2F..%2F..%2F..%2F${MANIFEST}`,
    ]) {
      const code = await status(
        graph.send(new CopyObjectCommand({ Bucket: config.checkpointBucket, Key, CopySource })),
      );
      expect([400, 403], CopySource).toContain(code);
    }
    expect(await exists(config.checkpointBucket, Key)).toBe(false);
  });

  it("UploadPartCopy from another workspace's object by a `?…/..` copy source is refused by the proxy", async () => {
    const Key = `${prefixes.blobs}upload`;
    const { UploadId } = await graph.send(
      new CreateMultipartUploadCommand({ Bucket: config.checkpointBucket, Key }),
    );
    const own = `${OWN_ARTIFACTS}x?`;
    const code = await status(
      graph.send(
        new UploadPartCopyCommand({
          Bucket: config.checkpointBucket,
          Key,
          UploadId,
          PartNumber: 1,
          CopySource: `${config.artifactBucket}/${own}/${climb(own)}${MANIFEST}`,
        }),
      ),
    );
    expect(code).toBe(400);
  });

  it("DeleteObjects with a key that he.decode reads as `..` (`&period;`) is refused, nothing deleted", async () => {
    const from = `${prefixes.blobs}x`;
    const dots = "&period;&period;/".repeat(from.split("/").length);
    const body = `<Delete><Object><Key>${from}/${dots}${VICTIM_BLOB}</Key></Object></Delete>`;
    const code = await signedRaw("POST", `/${config.checkpointBucket}?delete`, body, {
      "content-type": "application/xml",
      "content-md5": createHash("md5").update(body).digest("base64"),
    });
    expect(code).toBe(400);
    expect(await exists(config.checkpointBucket, VICTIM_BLOB)).toBe(true);
  });

  it("an object path with a fragment, an encoded separator, an empty segment or a backslash is refused", async () => {
    const own = `/${config.checkpointBucket}/${prefixes.blobs}`;
    for (const target of [
      `${own}x#/${climb(prefixes.blobs)}${VICTIM_BLOB}`,
      `${own}x%2F..%2F..%2F${VICTIM_BLOB}`,
      `${own}x\\..\\..\\${VICTIM_BLOB}`,
      `${own}x//y`,
      `${own}x?versionId=1`,
      `${own}x?prefix=a&prefix=b`,
    ])
      expect(await signedRaw("GET", target), target).toBe(400);
    await expect(
      graph.send(new GetObjectCommand({ Bucket: config.checkpointBucket, Key: VICTIM_BLOB })),
    ).rejects.toThrow();
  });
});
