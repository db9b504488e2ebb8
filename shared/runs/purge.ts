import { batchWrite } from "../aws/batch.ts";
import { queryAll, queryPage } from "../aws/ddb.ts";
import { forEachLimit } from "../concurrency.ts";
import { config } from "../config.ts";
import { isRunOf, type TraceRunItem, traceRunKeys } from "../records/runs.ts";
import { deleteRunPayloads } from "../retention/run-payloads.ts";
import { dayOf } from "../time.ts";

// Deleting a project deletes its runs: every day partition between its first and last run, each shard,
// run items with their patch records, feedback, attachments and everything under their S3 payload prefix.
// Idempotent, so a retried invocation finishes what an earlier one started.
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
        // Runs only (by their primary key): anything else in the index is left, and ends this partition's loop.
        const runs = page.items.filter(isRunOf(job.tenant_id));
        if (!runs.length) break;
        // The runs' S3 objects first (every version of each offloaded field, and the attachments: all under the
        // run's payload prefix, as retention deletes them), so a purge stopped half-way still finds these runs.
        await forEachLimit(runs, 8, async (i) => {
          await deleteRunPayloads(job.tenant_id, i.id);
        });
        // Each run's partition: the run, its patch record, its feedback (with their pointers by id), its
        // feedback summary, its attachments' records and, for a root, its trace's tier record.
        const records = (
          await Promise.all(
            runs.map((i) =>
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
        deleted += runs.length;
      }
    }
  }
  return deleted;
}
