import { getItem } from "../aws/ddb.ts";
import { forEachLimit } from "../concurrency.ts";
import { logger } from "../log.ts";
import { traceRunKeys } from "../records/runs.ts";
import { deleteAttachmentObject, deleteRunPayloads } from "./run-payloads.ts";
import { expiredAttachment, expiredRun, recordsOf, sequenceNumberOf } from "./ttl-stream.ts";

// Retention: DynamoDB TTL deletes a run's items once its tier's age has passed; this deletes the S3 payloads of
// every run item TTL removed. An attachment record outlives its run's item (it expires the long-lived retention
// after it arrived), so when it expires its object goes too unless its run is still there (then the run's own
// expiry takes it): attachments sent for a run that never arrived do not stay in S3. Other records of the batch
// (user deletes, inserts, other items) are ignored.

/** A DynamoDB Streams event source's partial batch answer: processing resumes from the first failed record. */
export interface BatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

const CONCURRENCY = 8;

/** Cleans up the runs of a stream batch; failures are reported (or thrown) so the event source retries them. */
export async function cleanUpExpiredRuns(
  event: unknown,
): Promise<BatchResponse & { runs: number; attachments: number }> {
  const records = recordsOf(event);
  const failed = new Set<number>();
  let runs = 0;
  let attachments = 0;
  await forEachLimit(records, CONCURRENCY, async (record, i) => {
    const run = expiredRun(record);
    const attachment = run ? undefined : expiredAttachment(record);
    try {
      if (run) {
        await deleteRunPayloads(run.tenant_id, run.run_id);
        runs++;
      } else if (attachment) {
        const { tenant_id, run_id, name } = attachment;
        if (await getItem("runs", traceRunKeys.run(tenant_id, run_id), true)) return;
        await deleteAttachmentObject(tenant_id, run_id, name);
        attachments++;
      }
    } catch (error) {
      failed.add(i);
      logger.error("expired run's payload cleanup failed", { ...(run ?? attachment), error });
    }
  });
  if (!failed.size) return { batchItemFailures: [], runs, attachments };
  // A stream is retried from the earliest failed record on (the records after it again too: deletes are idempotent).
  const first = records[Math.min(...failed)];
  const sequence = sequenceNumberOf(first);
  if (!sequence) throw new Error(`${failed.size} expired run(s) of the batch could not be cleaned up`);
  return { batchItemFailures: [{ itemIdentifier: sequence }], runs, attachments };
}
