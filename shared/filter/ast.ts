// AST, field catalogue and error type for the run filter language.

export type Scalar = string | number | boolean | null;
export type Literal = Scalar | Scalar[];

export const COMPARATORS = [
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "has",
  "search",
  "in",
  "like",
  "ilike",
  "exists",
] as const;
export type Comparator = (typeof COMPARATORS)[number];

// How a field is read from a run and which literals it accepts.
export type FieldKind = "string" | "time" | "latency" | "number" | "bool" | "tags" | "pairKey" | "pairValue";

export const FIELD_KINDS = {
  id: "string",
  name: "string",
  run_type: "string",
  status: "string",
  error: "string",
  trace_id: "string",
  parent_run_id: "string",
  session_id: "string",
  thread_id: "string",
  start_time: "time",
  end_time: "time",
  first_token_time: "time",
  latency: "latency",
  total_tokens: "number",
  prompt_tokens: "number",
  completion_tokens: "number",
  total_cost: "number",
  prompt_cost: "number",
  completion_cost: "number",
  is_root: "bool",
  tags: "tags",
  metadata_key: "pairKey",
  input_key: "pairKey",
  output_key: "pairKey",
  metadata_value: "pairValue",
  input_value: "pairValue",
  output_value: "pairValue",
} as const satisfies Record<string, FieldKind>;

export type FieldName = keyof typeof FIELD_KINDS;
export const FIELDS = Object.keys(FIELD_KINDS) as FieldName[];

export function isFieldName(name: string): name is FieldName {
  return Object.hasOwn(FIELD_KINDS, name);
}

export function fieldKind(field: FieldName): FieldKind {
  return FIELD_KINDS[field];
}

// Key/value field families whose conditions pair up on the same entry inside one `and(...)`.
export type PairFamily = "metadata" | "input" | "output";

export function pairFamily(field: FieldName): PairFamily | null {
  if (field === "metadata_key" || field === "metadata_value") return "metadata";
  if (field === "input_key" || field === "input_value") return "input";
  if (field === "output_key" || field === "output_value") return "output";
  return null;
}

/**
 * One comparison. `field` is null only for one-argument `search("text")`.
 * `value` is a list for `in`, a boolean for `exists`, a scalar otherwise.
 */
export interface CmpNode {
  kind: "cmp";
  op: Comparator;
  field: FieldName | null;
  value: Literal;
}
export interface AndNode {
  kind: "and";
  children: FilterNode[];
}
export interface OrNode {
  kind: "or";
  children: FilterNode[];
}
export interface NotNode {
  kind: "not";
  child: FilterNode;
}
export type FilterNode = CmpNode | AndNode | OrNode | NotNode;

/** The run shape the evaluator reads; time fields may be ISO strings or epoch milliseconds. */
export interface FilterableRun {
  id: string;
  name: string;
  run_type: string;
  status: string;
  start_time: string | number;
  end_time?: string | number | null;
  first_token_time?: string | number | null;
  tags?: string[] | null;
  extra?: { metadata?: Record<string, unknown> | null; [key: string]: unknown } | null;
  inputs?: unknown;
  outputs?: unknown;
  error?: string | null;
  total_tokens?: number | string | null;
  prompt_tokens?: number | string | null;
  completion_tokens?: number | string | null;
  total_cost?: number | string | null;
  prompt_cost?: number | string | null;
  completion_cost?: number | string | null;
  trace_id: string;
  parent_run_id?: string | null;
  is_root: boolean;
  session_id: string;
  /** The conversation thread (from the metadata keys session_id, thread_id, conversation_id). */
  thread_id?: string | null;
}
