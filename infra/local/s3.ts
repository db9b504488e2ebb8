import { createHash, randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
// @ts-expect-error s3rver ships no types
import FilesystemStore from "s3rver/lib/stores/filesystem.js";
import { carriesToken, NOT_PROXIED } from "./backend-token.ts";
import { withoutRequestTimeouts } from "./http-util.ts";
import { presignedMatches } from "./s3-presigned.ts";

// s3rver in-process on loopback, with the platform's buckets. It answers only the policy proxy (the token of its
// start, backend-token.ts), which signs what it forwards with s3rver's own (public) keys.
// A process that starts it needs `node --openssl-legacy-provider` (launch.mjs, test/run.mjs, the break-out bench):
// s3rver makes ListObjectsV2's continuation tokens with DES, which OpenSSL 3 keeps in its legacy provider, so
// without the flag any listing longer than one page (1,000 keys) fails.
export const S3_ACCESS_KEY_ID = "S3RVER";
export const S3_SECRET_ACCESS_KEY = "S3RVER";
/** S3's limit on one PUT's body (PutObject, UploadPart): 5 GiB. */
const MAX_PUT_BYTES = 5 * 1024 ** 3;

interface KoaContext {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}

export async function startS3(opts: {
  host: string;
  port: number;
  directory: string;
  buckets: string[];
  token: string;
}) {
  mkdirSync(opts.directory, { recursive: true });
  const server = new S3rver({
    address: opts.host,
    port: opts.port,
    directory: opts.directory,
    silent: true,
    vhostBuckets: false,
    configureBuckets: opts.buckets.map((name) => ({ name, configs: [] })),
  });
  // First of its middleware: only the proxy's requests, bodies within S3's limits, and a presigned URL checked as S3
  // checks it (s3rver takes any SigV4 signature).
  server.middleware.unshift(onlyProxied(opts.token), boundedBody, refuseForgedPresigned);
  const addr = await server.run();
  withoutRequestTimeouts(server.httpServer);
  return { endpoint: `http://${opts.host}:${addr.port}`, stop: () => server.close() as Promise<void> };
}

// S3 never shows a partial object; s3rver writes an object over its old file in place and answers before the
// write is flushed, so a read meanwhile (or right after) got a truncated body. Written whole to a temporary
// file beside it (not an object name, so no listing sees it), then renamed over it.
FilesystemStore.prototype.putObject = async function putObject(
  this: {
    getResourcePath(b: string, k: string, r: string): string;
    putMetadata(...a: unknown[]): Promise<void>;
  },
  object: { bucket: string; key: string; metadata: unknown; content: Buffer | Readable },
) {
  const objectPath = this.getResourcePath(object.bucket, object.key, "object");
  await mkdir(dirname(objectPath), { recursive: true });
  const md5 = createHash("md5");
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      md5.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const source = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
  await whole(objectPath, (path) => pipeline(source, count, createWriteStream(path)));
  const digest = md5.digest("hex");
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};

/** Answers S3's XML error instead of going on. */
function refuse(ctx: KoaContext, status: number, code: string, message: string): undefined {
  ctx.status = status;
  ctx.type = "application/xml";
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  return undefined;
}

const onlyProxied = (token: string) => (ctx: KoaContext, next: () => Promise<unknown>) =>
  carriesToken(ctx.headers, token) ? next() : refuse(ctx, 403, "AccessDenied", NOT_PROXIED);

/** A PUT or POST body states its length, at most S3's 5 GiB, as S3 requires (400 EntityTooLarge, 411 above). */
function boundedBody(ctx: KoaContext, next: () => Promise<unknown>) {
  if (ctx.method !== "PUT" && ctx.method !== "POST") return next();
  const length = ctx.headers["content-length"];
  if (length === undefined && ctx.headers["transfer-encoding"] !== undefined)
    return refuse(ctx, 411, "MissingContentLength", "You must provide the Content-Length HTTP header.");
  if (Number(length) > MAX_PUT_BYTES)
    return refuse(ctx, 400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size.");
  return next();
}

async function refuseForgedPresigned(ctx: KoaContext, next: () => Promise<unknown>): Promise<unknown> {
  if (!/[?&]X-Amz-Signature=/.test(ctx.url)) return next();
  if (await presignedMatches(ctx, S3_SECRET_ACCESS_KEY)) return next();
  return refuse(
    ctx,
    403,
    "SignatureDoesNotMatch",
    "The request signature we calculated does not match the signature you provided.",
  );
}

/** Writes `path` through `write` to a temporary file beside it, then renames it over `path`. */
async function whole(path: string, write: (partial: string) => Promise<unknown>): Promise<void> {
  const partial = `${path}.${randomUUID()}.partial`;
  try {
    await write(partial);
    await rename(partial, path);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}
