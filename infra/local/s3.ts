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
import { presignedMatches } from "./s3-presigned.ts";

// s3rver in-process on loopback, with the platform's buckets.
export const S3_ACCESS_KEY_ID = "S3RVER";
export const S3_SECRET_ACCESS_KEY = "S3RVER";

export async function startS3(opts: { host: string; port: number; directory: string; buckets: string[] }) {
  mkdirSync(opts.directory, { recursive: true });
  const server = new S3rver({
    address: opts.host,
    port: opts.port,
    directory: opts.directory,
    silent: true,
    vhostBuckets: false,
    configureBuckets: opts.buckets.map((name) => ({ name, configs: [] })),
  });
  // First of its middleware: a presigned URL is checked as S3 checks it (s3rver takes any SigV4 signature).
  server.middleware.unshift(refuseForgedPresigned);
  const addr = await server.run();
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

async function refuseForgedPresigned(
  ctx: {
    method: string;
    url: string;
    headers: Record<string, string | string[] | undefined>;
    status: number;
    type: string;
    body: unknown;
  },
  next: () => Promise<unknown>,
): Promise<unknown> {
  if (!/[?&]X-Amz-Signature=/.test(ctx.url)) return next();
  if (await presignedMatches(ctx, S3_SECRET_ACCESS_KEY)) return next();
  ctx.status = 403;
  ctx.type = "application/xml";
  ctx.body =
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message></Error>';
  return undefined;
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
