// The exportable run fields: the schema of an exported row (spec B, "Exportable run fields"): the columns of the Parquet files, in order.
// `export_fields` on an export picks a subset of these names.
export const EXPORT_FIELDS = [
  "id",
  "tenant_id",
  "session_id",
  "trace_id",
  "parent_run_id",
  "parent_run_ids",
  "reference_example_id",
  "name",
  "run_type",
  "start_time",
  "end_time",
  "status",
  "is_root",
  "dotted_order",
  "trace_tier",
  "inputs",
  "outputs",
  "error",
  "extra",
  "events",
  "tags",
  "feedback_stats",
  "total_tokens",
  "prompt_tokens",
  "completion_tokens",
  "total_cost",
  "prompt_cost",
  "completion_cost",
  "first_token_time",
] as const;
export type ExportField = (typeof EXPORT_FIELDS)[number];

/** How each column is typed. v1 writes lists and JSON as JSON text; v2_beta uses LIST and the JSON logical type. */
export const FIELD_KINDS: Record<
  ExportField,
  "string" | "json" | "timestamp" | "list" | "int" | "float" | "bool"
> = {
  id: "string",
  tenant_id: "string",
  session_id: "string",
  trace_id: "string",
  parent_run_id: "string",
  parent_run_ids: "list",
  reference_example_id: "string",
  name: "string",
  run_type: "string",
  start_time: "timestamp",
  end_time: "timestamp",
  status: "string",
  is_root: "bool",
  dotted_order: "string",
  trace_tier: "string",
  inputs: "json",
  outputs: "json",
  error: "string",
  extra: "json",
  events: "json",
  tags: "list",
  feedback_stats: "json",
  total_tokens: "int",
  prompt_tokens: "int",
  completion_tokens: "int",
  total_cost: "float",
  prompt_cost: "float",
  completion_cost: "float",
  first_token_time: "timestamp",
};

/**
 * One exported run, as the exporter hands it to the Parquet writer: timestamps as canonical UTC strings
 * (`2026-01-05T10:00:00.123456Z`, microsecond precision), JSON fields as JSON text, lists as string arrays,
 * absent values as null.
 */
export type ExportRow = { [K in ExportField]?: string | number | boolean | string[] | null };
