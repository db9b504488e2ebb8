import { z } from "zod";
import { NotFound } from "../errors.ts";
import { type ExportRunRecord, type ExportRunStatus, exportKeys, exportRuns } from "../records/export.ts";
import { canonicalNow } from "../time.ts";
import { FINAL, runIdOf } from "./exports.ts";

// Export runs: one per UTC day of an export (the record: shared/records/export.ts). Each records its
// checkpoint (cursor, files, rows) after every file it writes, and the message of each failed attempt under
// errors.retry_<n>.

export function runWire(r: ExportRunRecord) {
  return {
    id: r.id,
    bulk_export_id: r.bulk_export_id,
    status: r.status,
    retry_number: r.retry_number,
    errors: r.errors ?? {},
    created_at: r.created_at,
    updated_at: r.updated_at,
    finished_at: r.finished_at ?? null,
    start_time: r.start_time,
    end_time: r.end_time,
    metadata: {
      prefix: r.prefix,
      start_time: r.start_time,
      end_time: r.end_time,
      result: {
        rows_written: r.rows_written,
        exported_files: r.files ?? [],
        export_path: r.export_path,
        latest_cursor: r.latest_cursor ?? null,
      },
    },
  };
}

/** Creates the run of one day unless it exists (plans are re-run on resume). */
export async function ensureRun(
  tenant: string,
  exportId: string,
  day: string,
  window: { start_time: string; end_time: string; prefix: string; export_path: string },
): Promise<string> {
  const id = runIdOf(exportId, day);
  const at = canonicalNow();
  const record: ExportRunRecord = {
    id,
    bulk_export_id: exportId,
    tenant_id: tenant,
    day,
    status: "Created",
    retry_number: 0,
    errors: {},
    created_at: at,
    updated_at: at,
    finished_at: null,
    ...window,
    rows_written: 0,
    files: [],
    files_count: 0,
    latest_cursor: null,
  };
  await exportRuns.create(record);
  return id;
}

export async function getExportRun(
  tenant: string,
  exportId: string,
  runId: string,
): Promise<ExportRunRecord> {
  const r = await exportRuns.get({ tenant, exportId, runId });
  if (!r) throw new NotFound("Export run not found");
  return r;
}

export async function listExportRuns(tenant: string, exportId: string): Promise<ExportRunRecord[]> {
  const out = await exportRuns.list(exportKeys.runsPk(tenant, exportId), {
    prefix: "RUN#",
    consistent: true,
  });
  return out.sort((a, b) => (a.start_time < b.start_time ? -1 : 1));
}

interface UpdateOpts {
  /** Fields to set; a dotted name sets a map entry (`errors.retry_0`). */
  set?: Partial<ExportRunRecord> & Record<`errors.${string}`, string>;
  add?: Partial<Record<"retry_number" | "rows_written" | "files_count", number>>;
  append?: Partial<Record<"files", string[]>>;
  /** Condition on plain attribute equality, e.g. {files_count: 3}. */
  when?: Partial<ExportRunRecord>;
  /** The status must not be one of these. */
  notIn?: readonly string[];
}

/** One conditional update of a run record; false when its condition did not hold. */
export function updateRun(
  tenant: string,
  exportId: string,
  runId: string,
  opts: UpdateOpts,
): Promise<boolean> {
  return exportRuns.update(
    { tenant, exportId, runId },
    {
      set: { updated_at: canonicalNow(), ...opts.set },
      add: opts.add,
      append: opts.append,
      when: opts.when,
      notIn: opts.notIn ? { status: opts.notIn } : undefined,
    },
  );
}

/**
 * Records a failed attempt as errors.retry_<n> and moves the run to its next attempt. Conditional on the
 * retry number, so one failure is recorded once however many times this is called for it.
 */
export async function recordFailure(
  tenant: string,
  run: ExportRunRecord,
  message: string,
  final: boolean,
): Promise<boolean> {
  const n = run.retry_number ?? 0;
  return updateRun(tenant, run.bulk_export_id, run.id, {
    set: {
      [`errors.retry_${n}`]: message.slice(0, 2000),
      ...(final ? { status: "Failed", finished_at: canonicalNow() } : { attempt_started_at: canonicalNow() }),
    },
    ...(final ? {} : { add: { retry_number: 1 } }),
    when: { retry_number: n },
    notIn: [...FINAL],
  });
}

/** Marks every unfinished run of an export with a final status (cancel, failure, timeout). */
export async function finishOpenRuns(
  tenant: string,
  exportId: string,
  status: ExportRunStatus,
  withErrors?: ExportRunStatus,
) {
  for (const r of await listExportRuns(tenant, exportId)) {
    if (FINAL.has(r.status)) continue;
    const hasErrors = Object.keys(r.errors ?? {}).length > 0;
    await updateRun(tenant, exportId, r.id, {
      set: { status: hasErrors && withErrors ? withErrors : status, finished_at: canonicalNow() },
      notIn: [...FINAL],
    });
  }
}

/** An export run as the API shows it (for the OpenAPI document). */
export const ExportRunOut = z.object({
  id: z.uuid(),
  bulk_export_id: z.uuid(),
  status: z.string(),
  retry_number: z.number().int(),
  errors: z.record(z.string(), z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  start_time: z.string(),
  end_time: z.string(),
  metadata: z.object({
    prefix: z.string(),
    start_time: z.string(),
    end_time: z.string(),
    result: z.object({
      rows_written: z.number().int(),
      exported_files: z.array(z.string()),
      export_path: z.string(),
      latest_cursor: z.string().nullable(),
    }),
  }),
});
