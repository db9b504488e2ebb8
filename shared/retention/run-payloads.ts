import { DeleteObjectCommand, DeleteObjectsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { s3 } from "../aws/clients.ts";
import { config } from "../config.ts";

// A run's offloaded JSON fields (every version: shared/runs/payloads.ts) live under one prefix of the platform
// bucket; retention deletes them all with the run.
export const runPayloadPrefix = (tenantId: string, runId: string) => `payloads/${tenantId}/runs/${runId}/`;

/** Where a run attachment's bytes are: under the run's payload prefix (retention deletes it with the run). */
export const attachmentObjectKey = (tenantId: string, runId: string, name: string) =>
  `${runPayloadPrefix(tenantId, runId)}attachments/${encodeURIComponent(name)}`;

/** Deletes one attachment's object (idempotent: a missing object is no error). */
export async function deleteAttachmentObject(tenantId: string, runId: string, name: string): Promise<void> {
  await s3().send(
    new DeleteObjectCommand({
      Bucket: config.defaultBucket,
      Key: attachmentObjectKey(tenantId, runId, name),
    }),
  );
}

/**
 * Deletes every object under the run's payload prefix, a listed page at a time; returns how many were listed.
 * Idempotent: a retry lists what is left (nothing, once done). Object keys only: payload contents are never read.
 */
export async function deleteRunPayloads(tenantId: string, runId: string): Promise<number> {
  const Prefix = runPayloadPrefix(tenantId, runId);
  let deleted = 0;
  let ContinuationToken: string | undefined;
  do {
    const page = await s3().send(
      new ListObjectsV2Command({ Bucket: config.defaultBucket, Prefix, ContinuationToken }),
    );
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
    if (keys.length) {
      const out = await s3().send(
        new DeleteObjectsCommand({ Bucket: config.defaultBucket, Delete: { Objects: keys, Quiet: true } }),
      );
      // DeleteObjects answers 200 with per-key errors: any of them fails the run's cleanup (retried).
      const failed = (out.Errors ?? []).filter((e) => e.Code !== "NoSuchKey");
      if (failed.length)
        throw new Error(
          `deleting ${failed.length} payload object(s) under ${Prefix} failed: ${failed[0].Code ?? "error"}`,
        );
      deleted += keys.length;
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
  return deleted;
}
