import { randomUUID } from "node:crypto";
import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { z } from "zod";
import { CREATE_ONLY, cancelCodes, putInput, queryAll, transact } from "../aws/ddb.ts";
import { FilterParseError, NotFound, ValidationFailed, type ValidationIssue } from "../errors.ts";
import { parseFilter } from "../filter/index.ts";
import { uuidv5 } from "../ids.ts";
import { getProject } from "../projects/projects.ts";
import {
  activeExports,
  bulkExports,
  COMPRESSIONS,
  type ExportChildItem,
  type ExportQueueItem,
  type ExportRecord,
  type ExportStatus,
  exportKeys,
  FORMAT_VERSIONS,
  STATUSES,
} from "../records/export.ts";
import { EXPORT_FIELDS } from "../records/export-fields.ts";
import { canonicalNow, canonicalTime } from "../time.ts";
import { getDestination } from "./destinations.ts";
import { exportDays, maxExportDays } from "./workflow.ts";

// Bulk exports and their runs (one per UTC day). Records and their key layout: shared/records/export.ts.
export const FINAL: ReadonlySet<string> = new Set(["Completed", "Failed", "Cancelled", "TimedOut"]);

const NS = "5f0d1c8e-2f4b-4e53-9d7a-6b1f7c2a9e41";
export const runIdOf = (exportId: string, day: string) => uuidv5(`${exportId}/${day}`, NS);
export const childIdOf = (parentId: string, windowStart: string) => uuidv5(`${parentId}@${windowStart}`, NS);

const time = (field: string) =>
  z
    .string()
    .refine((s) => canonicalTime(s) !== undefined, `${field} should be an ISO 8601 timestamp`)
    .transform((s) => canonicalTime(s)!);

/** The create body (compat-notes). Extra fields are ignored. */
export const ExportCreate = z.looseObject({
  bulk_export_destination_id: z.uuid(),
  session_id: z.uuid(),
  start_time: time("start_time"),
  end_time: time("end_time").nullish(),
  filter: z.string().max(10_000).nullish(),
  export_fields: z
    .array(z.enum(EXPORT_FIELDS))
    .min(1)
    .superRefine((fields, ctx) => {
      fields.forEach((f, i) => {
        if (fields.indexOf(f) !== i)
          ctx.addIssue({
            code: "custom",
            path: [i],
            message: `${f} is repeated (already at index ${fields.indexOf(f)})`,
          });
      });
    })
    .nullish(),
  format: z.enum(["Parquet", "parquet"]).nullish(),
  format_version: z.enum(FORMAT_VERSIONS).nullish(),
  compression: z.enum(COMPRESSIONS).nullish(),
  interval_hours: z.number().int().min(1).max(168).nullish(),
});
export type ExportCreateIn = z.output<typeof ExportCreate>;

/** An export as the API shows it: its record without the workflow's bookkeeping. */
export type BulkExport = Omit<
  ExportRecord,
  "execution_arn" | "launches" | "started_at" | "next_window_start" | "schedule_name"
>;

export const toWire = (r: ExportRecord): BulkExport => ({
  id: r.id,
  tenant_id: r.tenant_id,
  bulk_export_destination_id: r.bulk_export_destination_id,
  session_id: r.session_id,
  start_time: r.start_time,
  end_time: r.end_time ?? null,
  filter: r.filter ?? null,
  format: "Parquet",
  format_version: r.format_version,
  compression: r.compression,
  interval_hours: r.interval_hours ?? null,
  export_fields: r.export_fields ?? null,
  status: r.status,
  created_at: r.created_at,
  updated_at: r.updated_at,
  finished_at: r.finished_at ?? null,
  source_bulk_export_id: r.source_bulk_export_id ?? null,
});

/** Cross-field rules zod cannot state alone, each a 422 issue naming its field. */
export async function validateCreate(tenant: string, body: ExportCreateIn): Promise<void> {
  const issues: ValidationIssue[] = [];
  const issue = (field: string, msg: string, type = "value_error") =>
    issues.push({ loc: ["body", field], msg, type });
  if (body.interval_hours != null) {
    if (body.end_time != null)
      issue("end_time", "end_time must be omitted for a scheduled export (interval_hours)");
  } else if (body.end_time == null) {
    issue("end_time", "end_time is required unless interval_hours is given", "missing");
  } else if (body.end_time <= body.start_time) {
    issue("end_time", "end_time must be after start_time");
  } else if (exportDays(body.start_time, body.end_time) > maxExportDays(tenant)) {
    issue(
      "end_time",
      `An export spans at most ${maxExportDays(tenant)} UTC days (one run per day must fit the workflow's state); split it into smaller exports`,
    );
  }
  if (body.filter) {
    try {
      parseFilter(body.filter);
    } catch (err) {
      if (!(err instanceof FilterParseError)) throw err;
      issue("filter", err.message, "filter_syntax");
    }
  }
  const [dest, project] = await Promise.all([
    getDestination(tenant, body.bulk_export_destination_id).catch((err) => {
      if (err instanceof NotFound) return undefined;
      throw err;
    }),
    getProject(tenant, body.session_id).catch((err) => {
      if (err instanceof NotFound) return undefined;
      throw err;
    }),
  ]);
  if (!dest) issue("bulk_export_destination_id", "No export destination with this id in the workspace");
  if (!project) issue("session_id", "No tracing project with this id in the workspace");
  if (issues.length) throw new ValidationFailed(issues);
}

/** Writes a new export: Created and queued, or IntervalScheduled for a scheduled export. Idempotent on id. */
export async function putExport(
  tenant: string,
  input: ExportCreateIn & { id?: string; source_bulk_export_id?: string | null; created_at?: string },
): Promise<ExportRecord> {
  const created = input.created_at ?? canonicalNow();
  const scheduled = input.interval_hours != null && !input.source_bulk_export_id;
  const record: ExportRecord = {
    id: input.id ?? randomUUID(),
    tenant_id: tenant,
    bulk_export_destination_id: input.bulk_export_destination_id,
    session_id: input.session_id,
    start_time: input.start_time,
    end_time: input.end_time ?? null,
    filter: input.filter ?? null,
    format: "Parquet",
    format_version: input.format_version ?? "v1",
    compression: input.compression ?? "gzip",
    interval_hours: input.interval_hours ?? null,
    export_fields: input.export_fields ?? null,
    status: scheduled ? "IntervalScheduled" : "Created",
    created_at: created,
    updated_at: created,
    finished_at: null,
    source_bulk_export_id: input.source_bulk_export_id ?? null,
    ...(scheduled ? { next_window_start: input.start_time } : {}),
  };
  const items: TransactWriteItem[] = [{ Put: bulkExports.putInput(record, CREATE_ONLY) }];
  if (!scheduled) {
    const queued: ExportQueueItem = { ...exportKeys.queue(tenant, record), id: record.id };
    items.push(
      { Put: putInput("main", queued) },
      { Put: activeExports.putInput({ tenant_id: tenant, id: record.id }) },
    );
  }
  if (record.source_bulk_export_id) {
    const child: ExportChildItem = {
      ...exportKeys.child(tenant, record.source_bulk_export_id, record.start_time, record.id),
      id: record.id,
    };
    items.push({ Put: putInput("main", child) });
  }
  try {
    await transact(items);
  } catch (err) {
    if (cancelCodes(err)?.[0] === "ConditionalCheckFailed")
      return (await getExportRecord(tenant, record.id))!;
    throw err;
  }
  return record;
}

export function getExportRecord(tenant: string, id: string): Promise<ExportRecord | undefined> {
  return bulkExports.get({ tenant, id });
}

export async function getExport(tenant: string, id: string): Promise<ExportRecord> {
  const r = await getExportRecord(tenant, id);
  if (!r) throw new NotFound("Bulk export not found");
  return r;
}

export async function listExports(
  tenant: string,
  opts: { limit: number; offset: number; status?: string },
): Promise<BulkExport[]> {
  const out: BulkExport[] = [];
  let skipped = 0;
  for await (const items of bulkExports.indexPages({
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk",
    values: { ":pk": exportKeys.listPk(tenant) },
    ScanIndexForward: false,
  })) {
    for (const item of items) {
      if (item.tenant_id !== tenant) continue;
      if (opts.status && item.status !== opts.status) continue;
      if (skipped++ < opts.offset) continue;
      out.push(toWire(item));
      if (out.length >= opts.limit) return out;
    }
  }
  return out;
}

/** Conditional status change; false when the record was not in one of `from`. */
export function setStatus(
  tenant: string,
  id: string,
  from: readonly string[],
  to: ExportStatus,
): Promise<boolean> {
  const at = canonicalNow();
  return bulkExports.update(
    { tenant, id },
    {
      set: { status: to, updated_at: at, ...(FINAL.has(to) ? { finished_at: at } : {}) },
      in: { status: from },
    },
  );
}

/** Updates bookkeeping fields of an export record (no status change), optionally when `when` holds. */
export function updateExportFields(
  tenant: string,
  id: string,
  fields: Partial<ExportRecord>,
  when?: Partial<ExportRecord>,
): Promise<boolean> {
  return bulkExports.update({ tenant, id }, { set: fields, when });
}

/** Exports spawned by a scheduled export, in window order. */
export async function childrenOf(tenant: string, parentId: string): Promise<string[]> {
  const items = await queryAll<ExportChildItem>("main", {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :c)",
    values: { ":pk": exportKeys.runsPk(tenant, parentId), ":c": "CHILD#" },
  });
  return items.map((i) => i.id);
}

/** The export as the API shows it (for the OpenAPI document). */
export const BulkExportOut = z.object({
  id: z.uuid(),
  tenant_id: z.string(),
  bulk_export_destination_id: z.uuid(),
  session_id: z.uuid(),
  start_time: z.string(),
  end_time: z.string().nullable(),
  filter: z.string().nullable(),
  format: z.literal("Parquet"),
  format_version: z.enum(FORMAT_VERSIONS),
  compression: z.enum(COMPRESSIONS),
  interval_hours: z.number().int().nullable(),
  export_fields: z.array(z.string()).nullable(),
  status: z.enum(STATUSES),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  source_bulk_export_id: z.uuid().nullable(),
});
