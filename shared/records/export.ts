import { repository } from "../aws/repository.ts";
import type { Sealed } from "../crypto/envelope.ts";
import type { ExportField } from "./export-fields.ts";

// Bulk export records (main table), each with its repository where the code reads and writes it by key.
//   destination  PK T#<tenant>#BULKEXPORTDEST           SK <id>     GSI1 T#<tenant>#BULKEXPORTDESTS / <created>#<id>
//   export       PK T#<tenant>#BULKEXPORT               SK <id>     GSI1 T#<tenant>#BULKEXPORTS / <created>#<id>
//   export run   PK T#<tenant>#BULKEXPORT#<export>      SK RUN#<run id>                 (one per UTC day)
//   child link   PK T#<tenant>#BULKEXPORT#<parent>      SK CHILD#<window start>#<child id>   (scheduled exports)
//   queue entry  PK T#<tenant>#BULKEXPORTQUEUE          SK <created>#<start>#<id>       (Created, waiting)
//   slots        PK T#<tenant>#BULKEXPORTSLOTS          SK SLOTS   running: string set of running export ids
//   active       PK BULKEXPORT#ACTIVE                   SK <tenant>#<id>    (unfinished exports, for the sweeper)
// The child link and the queue entry hold only the export id beside their keys, and the slots item only its
// set (changed by ADD/DELETE updates): they are read and written as typed items, without a repository.

export const STATUSES = [
  "Created",
  "Running",
  "Completed",
  "Failed",
  "Cancelled",
  "TimedOut",
  "IntervalScheduled",
] as const;
export type ExportStatus = (typeof STATUSES)[number];
export const COMPRESSIONS = ["none", "gzip", "snappy", "zstandard"] as const;
export const FORMAT_VERSIONS = ["v1", "v2_beta"] as const;

export const exportKeys = {
  destinationPk: (t: string) => `T#${t}#BULKEXPORTDEST`,
  destinationListPk: (t: string) => `T#${t}#BULKEXPORTDESTS`,
  export: (t: string, id: string) => ({ PK: `T#${t}#BULKEXPORT`, SK: id }),
  listPk: (t: string) => `T#${t}#BULKEXPORTS`,
  run: (t: string, exportId: string, runId: string) => ({
    PK: `T#${t}#BULKEXPORT#${exportId}`,
    SK: `RUN#${runId}`,
  }),
  runsPk: (t: string, exportId: string) => `T#${t}#BULKEXPORT#${exportId}`,
  child: (t: string, parent: string, start: string, child: string) => ({
    PK: `T#${t}#BULKEXPORT#${parent}`,
    SK: `CHILD#${start}#${child}`,
  }),
  queuePk: (t: string) => `T#${t}#BULKEXPORTQUEUE`,
  queue: (t: string, e: { created_at: string; start_time: string; id: string }) => ({
    PK: `T#${t}#BULKEXPORTQUEUE`,
    SK: `${e.created_at}#${e.start_time}#${e.id}`,
  }),
  slots: (t: string) => ({ PK: `T#${t}#BULKEXPORTSLOTS`, SK: "SLOTS" }),
  activePk: "BULKEXPORT#ACTIVE",
  active: (t: string, id: string) => ({ PK: "BULKEXPORT#ACTIVE", SK: `${t}#${id}` }),
};

// — destinations —

export interface DestinationConfig {
  bucket_name: string;
  /** "" or a path without leading/trailing slash. */
  prefix: string;
  region: string | null;
  endpoint_url: string | null;
  include_bucket_in_prefix: boolean;
}

export interface DestinationRecord {
  id: string;
  tenant_id: string;
  destination_type: "s3";
  display_name: string;
  config: DestinationConfig;
  /** The names of the credential fields given (the API shows these, never the values). */
  credentials_keys: string[];
  /** The credentials, KMS-sealed: write-only. Absent when the platform's own role writes. */
  credentials_sealed?: Sealed;
  created_at: string;
  updated_at: string;
}

export const destinations = repository<DestinationRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: exportKeys.destinationPk(tenant), SK: id }),
  keysOf: (d) => ({
    PK: exportKeys.destinationPk(d.tenant_id),
    SK: d.id,
    GSI1PK: exportKeys.destinationListPk(d.tenant_id),
    GSI1SK: `${d.created_at}#${d.id}`,
  }),
});

// — exports —

/** A stored export: its wire shape (BulkExport, shared/export/exports.ts) plus bookkeeping the API does not show. */
export interface ExportRecord {
  id: string;
  tenant_id: string;
  bulk_export_destination_id: string;
  session_id: string;
  start_time: string;
  /** Null for a scheduled export (interval_hours). */
  end_time: string | null;
  filter: string | null;
  format: "Parquet";
  format_version: (typeof FORMAT_VERSIONS)[number];
  compression: (typeof COMPRESSIONS)[number];
  interval_hours: number | null;
  /** The columns to write; null for all of them. */
  export_fields: ExportField[] | null;
  status: ExportStatus;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  source_bulk_export_id: string | null;
  /** The Step Functions execution working on it (the latest one). */
  execution_arn?: string;
  /** Executions started for it (a re-drive starts one more). */
  launches?: number;
  started_at?: string;
  /** A scheduled export: the start of the next window to spawn. */
  next_window_start?: string;
  /** A scheduled export: the one-time schedule that spawns its next window. */
  schedule_name?: string;
}

export const bulkExports = repository<ExportRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => exportKeys.export(tenant, id),
  keysOf: (e) => ({
    ...exportKeys.export(e.tenant_id, e.id),
    GSI1PK: exportKeys.listPk(e.tenant_id),
    GSI1SK: `${e.created_at}#${e.id}`,
  }),
});

/** An export waiting for a running slot (Created); the oldest is launched first. */
export interface ExportQueueItem {
  PK: string;
  SK: string;
  id: string;
}

/** An export a scheduled export spawned (its id; the window is in the sort key). */
export interface ExportChildItem {
  PK: string;
  SK: string;
  id: string;
}

/** An unfinished export, for the sweeper (written with the queue entry, removed when its slot is freed). */
export interface ActiveExportRecord {
  tenant_id: string;
  id: string;
}

export const activeExports = repository<ActiveExportRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => exportKeys.active(tenant, id),
  keysOf: (a) => exportKeys.active(a.tenant_id, a.id),
});

// — export runs —

export type ExportRunStatus = "Created" | "Running" | "Completed" | "Failed" | "Cancelled" | "TimedOut";

/**
 * One UTC day of an export. It records its checkpoint (cursor, files, rows) after every file it writes, and
 * the message of each failed attempt under errors.retry_<n>.
 */
export interface ExportRunRecord {
  id: string;
  bulk_export_id: string;
  tenant_id: string;
  day: string;
  status: ExportRunStatus;
  retry_number: number;
  errors: Record<string, string>;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  start_time: string;
  end_time: string;
  prefix: string;
  export_path: string;
  rows_written: number;
  files: string[];
  files_count: number;
  /** JSON of {shard, key}: where the next file starts; null before the first file. */
  latest_cursor: string | null;
  attempt_started_at?: string;
}

export const exportRuns = repository<ExportRunRecord, { tenant: string; exportId: string; runId: string }>({
  table: "main",
  key: ({ tenant, exportId, runId }) => exportKeys.run(tenant, exportId, runId),
  keysOf: (r) => exportKeys.run(r.tenant_id, r.bulk_export_id, r.id),
});
