import { mkdirSync } from "node:fs";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";

// s3rver in-process on loopback, with the platform's default bucket.
export const S3_ACCESS_KEY_ID = "S3RVER";
export const S3_SECRET_ACCESS_KEY = "S3RVER";

export async function startS3(opts: { host: string; port: number; directory: string; bucket: string }) {
  mkdirSync(opts.directory, { recursive: true });
  const server = new S3rver({
    address: opts.host,
    port: opts.port,
    directory: opts.directory,
    silent: true,
    vhostBuckets: false,
    configureBuckets: [{ name: opts.bucket, configs: [] }],
  });
  const addr = await server.run();
  return { endpoint: `http://${opts.host}:${addr.port}`, stop: () => server.close() as Promise<void> };
}
