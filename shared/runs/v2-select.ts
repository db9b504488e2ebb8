import { z } from "zod";
import type { RunField } from "./wire.ts";

// The `selects` of the /api/v2 run, trace and thread reads (the langsmith SDK's runs, traces and threads
// resources): upper-case names answered as lower-case keys, each read from the v1 wire run (shared/runs/wire.ts).
// A name this platform cannot answer is refused with a 422 rather than answered empty.

/** How one selected field is answered: the v1 fields it reads, and its value from the wire run. */
interface SelectDef {
  reads: readonly RunField[];
  value: (run: Record<string, unknown>) => unknown;
}

const PREVIEW_CHARS = 500;
/** A short plain-text preview of a JSON value (null when there is none). */
export function preview(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}
const errorText = (e: unknown) =>
  e === null || e === undefined || typeof e === "string" ? e : JSON.stringify(e);
const upper = (v: unknown) => (typeof v === "string" ? v.toUpperCase() : v);
const seconds = (run: Record<string, unknown>) =>
  typeof run.end_time === "string" && typeof run.start_time === "string"
    ? (Date.parse(run.end_time) - Date.parse(run.start_time)) / 1000
    : null;
/** Token and cost breakdowns are answered under `raw`, as the hosted API does. */
const raw = (v: unknown) => (v && typeof v === "object" ? { raw: v } : null);
const same = (field: RunField): SelectDef => ({ reads: [field], value: (r) => r[field] ?? null });
const details = (field: RunField): SelectDef => ({ reads: [field], value: (r) => raw(r[field]) });

const COMMON = {
  NAME: same("name"),
  START_TIME: same("start_time"),
  END_TIME: same("end_time"),
  FIRST_TOKEN_TIME: same("first_token_time"),
  ERROR: { reads: ["error"], value: (r) => errorText(r.error) ?? null },
  ERROR_PREVIEW: { reads: ["error"], value: (r) => preview(errorText(r.error)) },
  INPUTS: same("inputs"),
  INPUTS_PREVIEW: { reads: ["inputs"], value: (r) => preview(r.inputs) },
  OUTPUTS: same("outputs"),
  OUTPUTS_PREVIEW: { reads: ["outputs"], value: (r) => preview(r.outputs) },
  THREAD_ID: same("thread_id"),
  TRACE_ID: same("trace_id"),
  TOTAL_TOKENS: same("total_tokens"),
  PROMPT_TOKENS: same("prompt_tokens"),
  COMPLETION_TOKENS: same("completion_tokens"),
  TOTAL_COST: same("total_cost"),
  PROMPT_COST: same("prompt_cost"),
  COMPLETION_COST: same("completion_cost"),
  PROMPT_TOKEN_DETAILS: details("prompt_token_details"),
  COMPLETION_TOKEN_DETAILS: details("completion_token_details"),
  PROMPT_COST_DETAILS: details("prompt_cost_details"),
  COMPLETION_COST_DETAILS: details("completion_cost_details"),
} satisfies Record<string, SelectDef>;

/** The run fields of `selects` (RunSelectField) served here. */
export const RUN_SELECTS = {
  ...COMMON,
  ID: same("id"),
  RUN_TYPE: { reads: ["run_type"], value: (r) => upper(r.run_type) },
  STATUS: { reads: ["status"], value: (r) => upper(r.status) },
  LATENCY_SECONDS: { reads: ["start_time", "end_time"], value: seconds },
  EXTRA: same("extra"),
  METADATA: {
    reads: ["extra"],
    value: (r) => (r.extra as { metadata?: unknown } | null)?.metadata ?? null,
  },
  EVENTS: same("events"),
  MANIFEST: same("serialized"),
  PARENT_RUN_IDS: same("parent_run_ids"),
  PROJECT_ID: same("session_id"),
  DOTTED_ORDER: same("dotted_order"),
  IS_ROOT: same("is_root"),
  REFERENCE_EXAMPLE_ID: same("reference_example_id"),
  IS_IN_DATASET: { reads: ["reference_example_id"], value: (r) => !!r.reference_example_id },
  TAGS: same("tags"),
  APP_PATH: same("app_path"),
  ATTACHMENTS: {
    reads: ["s3_urls"],
    // v1 names an attachment `attachment.<name>` with {presigned_url, mime_type}; v2 maps the name to its URL.
    value: (r) =>
      Object.fromEntries(
        Object.entries((r.s3_urls ?? {}) as Record<string, { presigned_url?: string }>).map(([k, v]) => [
          k.replace(/^attachment\./, ""),
          v?.presigned_url,
        ]),
      ),
  },
  FEEDBACK_STATS: same("feedback_stats"),
} satisfies Record<string, SelectDef>;

/** The fields of `selects` of a thread's traces (ThreadTraceSelectField) served here. */
export const THREAD_TRACE_SELECTS = {
  ...COMMON,
  LATENCY: { reads: ["start_time", "end_time"], value: seconds },
} satisfies Record<string, SelectDef>;

// Fields the hosted API has that this platform does not record: refused by name.
const NOT_RECORDED = {
  REFERENCE_DATASET_ID: "datasets are not served here",
  PRICE_MODEL_ID: "costs come from the model price map, not a price model id",
  THREAD_EVALUATION_TIME: "thread evaluations are not served here",
  LAST_QUEUED_AT: "annotation queues are not served here",
  SHARE_URL: "shared runs are not served here",
  LS_USER_ID: "runs are traced with API keys, which have no user",
  OP: "the numeric run type code is not served: select NAME, or read run_type from the runs resource",
} as const;

/** A `selects` list: the served names, each refused name with the reason. */
export function selectsSchema<K extends string>(served: Record<K, SelectDef>, extra: readonly string[] = []) {
  const names = [...Object.keys(served), ...extra];
  return z.array(
    z.string().superRefine((v, ctx) => {
      if (names.includes(v)) return;
      const why = (NOT_RECORDED as Record<string, string>)[v];
      ctx.addIssue({
        code: "custom",
        message: why
          ? `${v} is not served here: ${why}`
          : `${JSON.stringify(v)} is not a field here; fields: ${names.join(", ")}`,
      });
    }),
  );
}

/** The v1 fields to read for `selects` (and `always`). */
export function readsOf(
  defs: Record<string, SelectDef>,
  selects: readonly string[],
  always: readonly RunField[] = [],
): RunField[] {
  return [...new Set<RunField>([...always, ...selects.flatMap((s) => defs[s]?.reads ?? [])])];
}

/** The selected fields of a wire run, under lower-case keys. */
export function project(
  defs: Record<string, SelectDef>,
  run: Record<string, unknown>,
  selects: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of selects) if (defs[s]) out[s.toLowerCase()] = defs[s].value(run);
  return out;
}
