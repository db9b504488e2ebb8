import { config } from "../config.ts";
import { DestinationError, EXPORT_ERRORS, ExportTimedOut, RetriesExhausted, RunTimedOut } from "../errors.ts";
import { compileFilter } from "../filter/index.ts";
import { logger } from "../log.ts";
import type { ExportRecord, ExportRunRecord } from "../records/export.ts";
import { EXPORT_FIELDS, type ExportField, type ExportRow } from "../records/export-fields.ts";
import { isExpired, type TraceRunRecord } from "../records/runs.ts";
import { loadField, loadFields } from "../runs/payloads.ts";
import { asFilterable, type DayCursor, dayReadDone, readDayPage } from "../runs/query.ts";
import { canonicalNow } from "../time.ts";
import { openDestination } from "./destinations.ts";
import { getExportRun, recordFailure, updateRun } from "./export-runs.ts";
import { FINAL, getExport } from "./exports.ts";
import { ParquetFileWriter } from "./parquet/writer.ts";
import { classifyS3Error } from "./s3-errors.ts";
import { StreamedFile } from "./upload.ts";
import { exportDeadline, FINAL_RUN_ERRORS } from "./workflow.ts";

// One export run = one UTC day of one project: a paginated Query over the day's shards, filtered, written as
// Parquet files of bounded size. After each file the run records where the next file starts (the shard and
// DynamoDB's LastEvaluatedKey), the file and the rows: a retried or resumed run continues from there, and
// since file names follow the file's sequence number (fixed by its starting cursor), a file rewritten after
// a crash replaces itself instead of leaving a stray copy.
export interface PartitionJob {
  tenant_id: string;
  export_id: string;
  run_id: string;
}

const JSON_COLUMNS = new Set<ExportField>(["inputs", "outputs", "extra", "events"]);

/** The stored attributes a set of columns reads (a projection for the Query). */
function attributesFor(fields: readonly ExportField[]): string[] {
  const attrs = new Set<string>(["id", "start_time", "expires_at"]);
  for (const f of fields) {
    if (JSON_COLUMNS.has(f) || f === "error") attrs.add(`${f}_json`).add(`${f}_ref`);
    else if (f === "feedback_stats") attrs.add("feedback_stats_json");
    else attrs.add(f);
  }
  return [...attrs];
}

async function jsonText(item: Partial<TraceRunRecord>, f: "inputs" | "outputs" | "extra" | "events") {
  const inline = item[`${f}_json` as const];
  if (typeof inline === "string") return inline;
  if (typeof item[`${f}_ref` as const] === "string") return JSON.stringify(await loadField(item, f));
  return null;
}

/** A stored run (the attributes the columns read, at least) as a Parquet row of the chosen columns. */
export async function toRow(
  item: Partial<TraceRunRecord>,
  fields: readonly ExportField[],
): Promise<ExportRow> {
  const row: ExportRow = {};
  for (const f of fields) {
    switch (f) {
      case "inputs":
      case "outputs":
      case "extra":
      case "events":
        row[f] = await jsonText(item, f);
        break;
      case "error": {
        const e: unknown =
          typeof item.error_json === "string" ? JSON.parse(item.error_json) : await loadField(item, "error");
        row.error = e == null ? null : typeof e === "string" ? e : JSON.stringify(e);
        break;
      }
      case "feedback_stats":
        row.feedback_stats = item.feedback_stats_json ?? null;
        break;
      case "trace_tier":
        row.trace_tier = item.trace_tier ?? null;
        break;
      case "tags":
      case "parent_run_ids": {
        const list = item[f];
        row[f] = Array.isArray(list) ? list.map(String) : [];
        break;
      }
      case "is_root":
        row.is_root = item.is_root == null ? null : Boolean(item.is_root);
        break;
      default:
        row[f] = item[f] ?? null;
    }
  }
  return row;
}

const fileName = (seq: number) => `part-${String(seq).padStart(5, "0")}.parquet`;

/**
 * Works on one export run until it is done or `budgetMs` has passed (then it returns at a file boundary and
 * the state machine calls again). Throws on failure; `runPartition` turns that into the recorded attempt.
 */
export async function exportPartition(job: PartitionJob, budgetMs: number): Promise<{ done: boolean }> {
  const started = Date.now();
  const exp = await getExport(job.tenant_id, job.export_id);
  let run = await getExportRun(job.tenant_id, job.export_id, job.run_id);
  if (FINAL.has(exp.status) || FINAL.has(run.status)) return { done: true };
  const exportEnd = exportDeadline(exp);
  if (exportEnd <= Date.now())
    throw new ExportTimedOut(`The export exceeded its timeout of ${config.export.timeoutSeconds} s`);
  if (run.status !== "Running") {
    await updateRun(job.tenant_id, job.export_id, run.id, {
      set: { status: "Running", attempt_started_at: canonicalNow() },
      notIn: [...FINAL],
    });
    run = await getExportRun(job.tenant_id, job.export_id, job.run_id);
  }
  const attemptEnd =
    Date.parse(run.attempt_started_at ?? canonicalNow()) + config.export.runTimeoutSeconds * 1000;
  if (attemptEnd <= Date.now())
    throw new RunTimedOut(`The run exceeded its timeout of ${config.export.runTimeoutSeconds} s`);
  // Stop at a file boundary when the invocation's budget, the attempt or the export runs out; the next call
  // (the state machine's loop) then continues, or fails the attempt / the export on its timeout.
  const stopAt = Math.min(started + budgetMs, attemptEnd, exportEnd);

  const fields = exp.export_fields ?? [...EXPORT_FIELDS];
  const match = exp.filter ? compileFilter(exp.filter) : undefined;
  const dest = await openDestination(job.tenant_id, exp.bulk_export_destination_id);
  // The run's day of the project, in [start_time, end_time): one starting exactly at end_time is the next day's.
  const read = {
    tenant: job.tenant_id,
    session: exp.session_id,
    day: run.day,
    lower: run.start_time,
    upper: run.end_time,
    attributes: match ? undefined : attributesFor(fields),
    limit: config.export.pageSize || undefined,
  };

  let cursor: DayCursor = run.latest_cursor ? JSON.parse(run.latest_cursor) : { shard: 0 };
  let seq = run.files_count ?? 0;
  let writer = newWriter(exp);
  let file = new StreamedFile(dest.client, dest.bucket, `${run.export_path}/${fileName(seq)}`);
  try {
    let pending = dayReadDone(cursor) ? undefined : readDayPage(read, cursor);
    while (pending) {
      const page = await pending;
      const next = page.next;
      pending = page.done ? undefined : readDayPage(read, next); // overlap the next read with this encode
      for (const item of page.items) {
        // A run past its retention is gone (DynamoDB TTL deletes it within a day or two).
        if (isExpired(item)) continue;
        if (match && !match(asFilterable(item, await loadFields(item)))) continue;
        writer.append(await toRow(item, fields));
      }
      if (writer.pendingBytes >= config.export.partBytes)
        await toDestination(() => file.add(writer.takeParts()));
      cursor = next;
      const finished = page.done;
      const outOfTime = Date.now() >= stopAt;
      if (writer.bytes >= config.export.fileBytes || finished || outOfTime) {
        if (writer.rows > 0) {
          const committed = await writeFile(job, run, file, writer, seq, cursor);
          if (!committed)
            return { done: FINAL.has((await getExportRun(job.tenant_id, job.export_id, job.run_id)).status) };
          seq++;
          writer = newWriter(exp);
          file = new StreamedFile(dest.client, dest.bucket, `${run.export_path}/${fileName(seq)}`);
        } else if (!finished) {
          // Nothing to write yet (filtered out): still move the checkpoint so a resume skips what was read.
          await updateRun(job.tenant_id, job.export_id, run.id, {
            set: { latest_cursor: JSON.stringify(cursor) },
            when: { files_count: seq },
            notIn: [...FINAL],
          });
        }
        if (finished) break;
        if (outOfTime) return { done: false };
      }
    }
    await updateRun(job.tenant_id, job.export_id, run.id, {
      set: {
        status: "Completed",
        finished_at: canonicalNow(),
        latest_cursor: JSON.stringify(cursor),
      },
      notIn: [...FINAL],
    });
    return { done: true };
  } catch (err) {
    await file.abort(); // whatever failed (a read, an encode, a write), the unfinished upload goes
    throw err;
  } finally {
    dest.client.destroy(); // a client per invocation: its sockets go with it
  }
}

function newWriter(exp: ExportRecord) {
  return new ParquetFileWriter({
    fields: exp.export_fields ?? EXPORT_FIELDS,
    formatVersion: exp.format_version,
    compression: exp.compression,
    rowGroupRows: config.export.rowGroupRows,
  });
}

/** Completes one file, then commits it with the cursor after it; false when the commit lost (cancel, another worker). */
async function writeFile(
  job: PartitionJob,
  run: ExportRunRecord,
  file: StreamedFile,
  writer: ParquetFileWriter,
  seq: number,
  cursor: DayCursor,
): Promise<boolean> {
  const current = await getExport(job.tenant_id, job.export_id);
  if (FINAL.has(current.status)) {
    await file.abort();
    return false;
  }
  await toDestination(() => file.complete(writer.finishParts().parts));
  return updateRun(job.tenant_id, job.export_id, run.id, {
    set: { latest_cursor: JSON.stringify(cursor) },
    append: { files: [file.key] },
    add: { rows_written: writer.rows, files_count: 1 },
    when: { files_count: seq },
    notIn: [...FINAL],
  });
}

/** An upload step (a failed send drops the file's upload: StreamedFile); destination errors become final. */
async function toDestination(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    throw destinationFailure(err);
  }
}

/** A destination error that retrying cannot fix (credentials, bucket, permissions) becomes a DestinationError. */
function destinationFailure(err: unknown): Error {
  if (err instanceof DestinationError) return err;
  const c = classifyS3Error(err);
  // The spec's message only: S3's own code and text would tell a missing bucket from a forbidden one.
  if (c.kind === "access_denied" || c.kind === "bucket_invalid" || c.kind === "key_id")
    return new DestinationError(c.message);
  return err instanceof Error ? err : new Error(String(err));
}

const NOT_RETRIED = new Set(FINAL_RUN_ERRORS);

/**
 * The ExportPartition task: one invocation of `exportPartition`, with each failure recorded on the run as
 * errors.retry_<n>. Destination errors and exhausted retries fail the run for good; anything else is thrown
 * for the state machine's Retry (30 s, fixed) to call again, resuming from the checkpoint.
 */
export async function runPartition(job: PartitionJob, budgetMs = config.export.chunkSeconds * 1000) {
  try {
    return await exportPartition(job, budgetMs);
  } catch (raw) {
    const err = raw instanceof Error ? raw : new Error(String(raw));
    const run = await getExportRun(job.tenant_id, job.export_id, job.run_id);
    const message = `${err.name}: ${err.message}`;
    if (err.name === EXPORT_ERRORS.timedOut) throw err;
    const final = NOT_RETRIED.has(err.name) || (run.retry_number ?? 0) >= config.export.maxRetries;
    await recordFailure(job.tenant_id, run, message, final);
    logger.warn("export run attempt failed", { ...job, attempt: run.retry_number, error: message, final });
    if (final && !NOT_RETRIED.has(err.name))
      throw new RetriesExhausted(`Run ${job.run_id} failed after ${run.retry_number} retries: ${message}`);
    throw err;
  }
}
