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

// The dummy key a local agent runtime signs its S3 requests with: not the platform's own. (s3rver, like
// DynamoDB Local, enforces no IAM: locally a runtime's isolation is its process, see runtimes.ts.)
export const RUNTIME_S3_KEY = { id: "AGENTRUNTIME", secret: "agent-runtime-local" } as const;

// @ts-expect-error s3rver ships no types
import S3rverAccount from "s3rver/lib/models/account.js";

S3rverAccount.DUMMY_ACCOUNT.createKeyPair(RUNTIME_S3_KEY.id, RUNTIME_S3_KEY.secret);
