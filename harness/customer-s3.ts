import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";
// @ts-expect-error s3rver ships no types
import AWSAccount from "s3rver/lib/models/account.js";

// A workspace's own S3 for export tests and benchmarks: an S3 server apart from the platform's (a port, a folder
// and a key pair of its own), as a customer's bucket is in AWS. Export destinations may not name the platform's S3
// nor use its keys (shared/export/destination-guard.ts), so exports are tested where a customer's would go.

/** The shape of LocalFacts' `s3`, so the export helpers (s3For, newBucket, s3Proxy) take either. */
export interface CustomerS3 {
  s3: { endpoint: string; access_key_id: string; secret_access_key: string; bucket: string };
}

export async function startCustomerS3(): Promise<
  CustomerS3 & { stop(): Promise<void>; server: { httpServer?: { unref(): void } }; directory: string }
> {
  const directory = mkdtempSync(join(tmpdir(), "customer-s3-"));
  const access_key_id = `AKIACUSTOMER${randomBytes(4).toString("hex").toUpperCase()}`;
  const secret_access_key = randomBytes(20).toString("hex");
  // s3rver checks signatures against its accounts' key pairs (a registry of the process).
  new AWSAccount(210987654321, "Customer").createKeyPair(access_key_id, secret_access_key);
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true, vhostBuckets: false });
  const addr = await server.run();
  return {
    s3: { endpoint: `http://127.0.0.1:${addr.port}`, access_key_id, secret_access_key, bucket: "" },
    server,
    directory,
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

let forProcess: Promise<CustomerS3> | undefined;

/** One customer S3 for a benchmark's process, which it does not keep alive (its folder goes when it exits). */
export function processCustomerS3(): Promise<CustomerS3> {
  forProcess ??= startCustomerS3().then((c) => {
    c.server.httpServer?.unref();
    process.once("exit", () => rmSync(c.directory, { recursive: true, force: true }));
    return { s3: c.s3 };
  });
  return forProcess;
}
