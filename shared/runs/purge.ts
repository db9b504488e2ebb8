import { DeleteObjectsCommand } from "@aws-sdk/client-s3";
import { batchWrite } from "../aws/batch.ts";
import { s3 } from "../aws/clients.ts";
import { queryAll, queryPage } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { JSON_FIELDS, type TraceRunItem, traceRunKeys } from "../records/runs.ts";
import { dayOf } from "../time.ts";
import { attachmentObjectKey } from "./attachments.ts";

// Deleting a project deletes its runs: every day partition between its first and last run, each shard,
// run items with their patch records, feedback, attachments and the payloads they offloaded to S3. Idempotent, so a retried
// invocation finishes what an earlier one started.
export interface PurgeJob {
  tenant_id: string;
  session_id: string;
  first_run_start_time: string | null;
  last_run_start_time: string | null;
}

export async function purgeProjectRuns(job: PurgeJob): Promise<number> {
  if (!job.first_run_start_time || !job.last_run_start_time) return 0;
  let deleted = 0;
  const last = Date.parse(`${dayOf(job.last_run_start_time)}T00:00:00Z`);
  for (let d = Date.parse(`${dayOf(job.first_run_start_time)}T00:00:00Z`); d <= last; d += 86_400_000) {
    const day = new Date(d).toISOString().slice(0, 10);
    for (let shard = 0; shard < config.runs.shards; shard++) {
      for (;;) {
        // Always the first page: what was deleted is gone from the index, so no cursor is needed.
        const page = await queryPage<TraceRunItem>("runs", {
          IndexName: "GSI1",
          KeyConditionExpression: "GSI1PK = :pk",
          values: { ":pk": traceRunKeys.partition(job.tenant_id, job.session_id, day, shard) },
          Limit: 100,
        });
        if (!page.items.length) break;
        // The payloads the runs offloaded to S3: the JSON fields held by reference.
        const refs = page.items.flatMap((i) =>
          JSON_FIELDS.map((f) => i[`${f}_ref` as const]).filter((ref) => typeof ref === "string"),
        );
        // Each run's partition: the run, its patch record, its feedback (with their pointers by id), its
        // feedback summary and, for a root, its trace's tier record.
        const records = (
          await Promise.all(
            page.items.map((i) =>
              queryAll<{ PK: string; SK: string }>("runs", {
                KeyConditionExpression: "PK = :pk",
                values: { ":pk": i.PK },
                ConsistentRead: true,
                ProjectionExpression: "PK, SK",
              }),
            ),
          )
        ).flat();
        await batchWrite(
          "runs",
          records.flatMap((r) => [
            { delete: { PK: r.PK, SK: r.SK } },
            ...(r.SK.startsWith("feedback#")
              ? [{ delete: traceRunKeys.feedbackPointer(job.tenant_id, r.SK.slice("feedback#".length)) }]
              : []),
          ]),
        );
        // And the files sent with the runs, named by their records.
        const files = records.flatMap((r) =>
          r.SK.startsWith("attachment#")
            ? [
                attachmentObjectKey(
                  job.tenant_id,
                  r.PK.slice(job.tenant_id.length + 1),
                  r.SK.slice("attachment#".length),
                ),
              ]
            : [],
        );
        const keys = [...refs, ...files];
        for (let i = 0; i < keys.length; i += 1000)
          await s3().send(
            new DeleteObjectsCommand({
              Bucket: config.defaultBucket,
              Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
            }),
          );
        deleted += page.items.length;
      }
    }
  }
  return deleted;
}
