import { z } from "zod";
import { qCsv, qInt } from "../http/query.ts";
import { MAX_QUERY_RUN_IDS, MAX_QUERY_SESSIONS } from "../platform/list-bounds.ts";
import { canonicalTime } from "../time.ts";
import { RunId } from "./schema.ts";
import { RUN_SELECTS, selectsSchema, THREAD_TRACE_SELECTS } from "./v2-select.ts";

// The request shapes of the /api/v2 run, trace and thread reads, as the langsmith SDK (0.9 on) sends them.
// Unknown fields are refused (a 422 naming them), and so are the hosted fields this platform does not serve.

const time = z.string().refine((v) => canonicalTime(v) !== undefined, "an RFC 3339 date-time");
const ids = (max: number) => z.array(z.uuid()).max(max);
/** Run and trace ids: any UUID-shaped id (OTLP spans make ids that are no RFC 4122 UUIDs). */
const runIds = (max: number) => z.array(RunId).max(max);
const filter = z.string().max(10_000);
// Up to 1,000 a page: a trace or a project read in fewer round trips (v1 pages 100 at the most).
const pageSize = z.number().int().min(1).max(1000).default(100);
const refused = (why: string) => z.never({ error: why }).optional();

const NOT_SERVED = {
  ai_search: refused("AI search is not served here: use filter (search(...) matches text)"),
  min_feedback_modified_at: refused("feedback time bounds are not served here"),
  max_feedback_modified_at: refused("feedback time bounds are not served here"),
};

export const RunsQueryBody = z.strictObject({
  project_ids: ids(MAX_QUERY_SESSIONS).min(1, "give project_ids (datasets are not served here)"),
  reference_dataset_id: refused("datasets are not served here: give project_ids"),
  ids: runIds(MAX_QUERY_RUN_IDS).optional(),
  trace_id: RunId.optional(),
  is_root: z.boolean().optional(),
  has_error: z.boolean().optional(),
  run_type: z.enum(["TOOL", "CHAIN", "LLM", "RETRIEVER", "EMBEDDING", "PROMPT", "PARSER"]).optional(),
  reference_examples: ids(MAX_QUERY_RUN_IDS).optional(),
  filter: filter.optional(),
  trace_filter: filter.optional(),
  tree_filter: filter.optional(),
  include_subtree_usage: z
    .literal(false, { error: "subtree usage is not served here: query the trace's runs" })
    .optional(),
  min_start_time: time.optional(),
  max_start_time: time.optional(),
  selects: selectsSchema(RUN_SELECTS).optional(),
  page_size: pageSize,
  cursor: z.string().max(4096).optional(),
  ...NOT_SERVED,
});

/** A repeated query parameter (`selects=A&selects=B` arrives comma-joined). */
const repeated = <T extends z.ZodType<unknown, string[]>>(item: T) => qCsv().pipe(item);

// The SDK always sends project_id to these reads; without it, the workspace is the scope (as v1's reads).
export const RunRetrieveQuery = z.looseObject({
  project_id: z.uuid().optional(),
  selects: repeated(selectsSchema(RUN_SELECTS)).optional(),
  start_time: time.optional(),
});

export const TracesQueryBody = z.strictObject({
  project_id: z.uuid({ error: "give project_id, the tracing project's id" }),
  trace_ids: runIds(MAX_QUERY_RUN_IDS).optional(),
  trace_filter: filter.optional(),
  tree_filter: filter.optional(),
  min_start_time: time.optional(),
  max_start_time: time.optional(),
  selects: selectsSchema(RUN_SELECTS).optional(),
  page_size: pageSize,
  cursor: z.string().max(4096).optional(),
  ...NOT_SERVED,
});

export const TraceRunsQuery = z.looseObject({
  project_id: z.uuid().optional(),
  filter: filter.optional(),
  min_start_time: time.optional(),
  max_start_time: time.optional(),
  selects: repeated(selectsSchema(RUN_SELECTS)).optional(),
});

export const ThreadsQueryBody = z.strictObject({
  project_id: z.uuid({ error: "give project_id, the tracing project's id" }),
  filter: filter.optional(),
  trace_filter: filter.optional(),
  tree_filter: filter.optional(),
  thread_filter: refused(
    "filters on thread summaries are not served here: use filter, trace_filter or tree_filter",
  ),
  min_start_time: time.optional(),
  max_start_time: time.optional(),
  page_size: pageSize,
  cursor: z.string().max(4096).optional(),
  ...NOT_SERVED,
});

export const ThreadTracesQuery = z.looseObject({
  project_id: z.uuid().optional(),
  filter: filter.optional(),
  selects: repeated(selectsSchema(THREAD_TRACE_SELECTS, ["TURN_NUMBER"])).optional(),
  page_size: qInt(1, 100).default(100),
  cursor: z.string().max(4096).optional(),
});
