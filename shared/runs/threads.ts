import { queryPages } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { NotFound } from "../errors.ts";
import { getProject, listProjects } from "../projects/projects.ts";
import { type ThreadRecord, threadKey, traceRunKeys } from "../records/runs.ts";
import { decodeKeyset, encodeKeyset } from "./keyset.ts";
import { aggregateRunStats, type StatRun } from "./stats.ts";
import { allRuns, runsById, traceUsage, windowOf } from "./v2.ts";
import { preview, project, readsOf, THREAD_TRACE_SELECTS } from "./v2-select.ts";

// Conversation threads (the langsmith SDK's client.threads): the traces whose runs carry the same thread id in
// their metadata (`session_id`, `thread_id` or `conversation_id`: shared/runs/derive.ts threadIdOf), read
// through the v1 run query. A thread's traces are its root runs; its usage sums every run carrying its id, as
// the hosted platform counts it (child runs without the metadata are not counted there either).
// Reads go through the thread index (shared/runs/thread-index.ts): a project's threads by their last trace's start,
// and each thread's runs, so they cost the threads and runs they answer, not the project's runs.

type Wire = Record<string, unknown>;

const SCAN_FIELDS = [
  "id",
  "trace_id",
  "thread_id",
  "is_root",
  "start_time",
  "end_time",
  "status",
  "first_token_time",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "prompt_cost",
  "completion_cost",
  "total_cost",
  "prompt_token_details",
  "completion_token_details",
  "prompt_cost_details",
  "completion_cost_details",
  "feedback_stats",
] as const;

/** Per-category sums of two detail maps over runs (prompt and completion side together). */
function detailSums(runs: Wire[], fields: string[]) {
  const out: Record<string, number> = {};
  for (const r of runs)
    for (const f of fields)
      for (const [k, v] of Object.entries((r[f] ?? {}) as Record<string, unknown>))
        if (typeof v === "number") out[k] = (out[k] ?? 0) + v;
  return out;
}

export interface ThreadsQuery {
  project_id: string;
  filter?: string;
  trace_filter?: string;
  tree_filter?: string;
  min_start_time?: string;
  max_start_time?: string;
  page_size: number;
  cursor?: string;
}

/** POST /api/v2/threads/query: the project's threads active in the window, most recently active first. */
export async function queryThreads(tenant: string, p: ThreadsQuery) {
  await getProject(tenant, p.project_id);
  const w = windowOf(p.min_start_time, p.max_start_time);
  const after = decodeKeyset(p.cursor, "body");
  const page: ReturnType<typeof summary>[] = [];
  let more = false;
  let lastMarker: ThreadRecord | undefined;
  // Threads whose last trace started in or after the window, newest first; one more than a page tells `more`.
  for await (const t of threadsSince(tenant, p.project_id, w.min, after)) {
    if (t.first_start_time > w.max) continue;
    const s = await threadSummary(tenant, p, w, t.thread_id);
    if (!s) continue;
    if (page.length === p.page_size) {
      more = true;
      break;
    }
    page.push(s);
    lastMarker = t;
  }
  await withPreviews(tenant, page);
  return {
    items: page,
    next_cursor:
      more && lastMarker ? encodeKeyset({ t: lastMarker.last_start_time, id: lastMarker.thread_id }) : null,
  };
}

/** The project's thread markers whose last trace started at `min` or later, newest first, after the cursor. */
async function* threadsSince(
  tenant: string,
  session: string,
  min: string,
  after: { t: string; id: string } | undefined,
): AsyncGenerator<ThreadRecord> {
  const hi = after ? `${after.t}#${threadKey(after.id)}` : "~";
  for await (const items of queryPages<ThreadRecord>("runs", {
    IndexName: "GSI3",
    KeyConditionExpression: "GSI3PK = :pk AND GSI3SK BETWEEN :lo AND :hi",
    values: { ":pk": traceRunKeys.projectThreads(tenant, session), ":lo": min, ":hi": hi },
    ScanIndexForward: false,
    Limit: 50,
  }))
    for (const t of items) {
      // Trusted by its primary key (an index's keys are plain attributes); the cursor's own thread is done.
      const own = traceRunKeys.thread(tenant, session, String(t.thread_id));
      if (t.PK !== own.PK || t.SK !== own.SK || t.GSI3SK === hi) continue;
      yield t;
    }
}

/** One thread's figures over its runs in the window, when it has a trace there that every filter keeps. */
async function threadSummary(
  tenant: string,
  p: ThreadsQuery,
  w: { min: string; max: string },
  thread: string,
) {
  const scope = { thread: { session: p.project_id, id: thread }, start_time: w.min, end_time: w.max };
  const runs = await allRuns(tenant, { ...scope, select: [...SCAN_FIELDS] }, config.runs.statsMaxRuns);
  const roots = runs.filter((r) => r.is_root);
  if (!roots.length) return undefined;
  // `filter` and `trace_filter` are judged on each trace's root, `tree_filter` on any run of a trace: a thread
  // is kept when one of its traces matches each given filter.
  for (const filters of [{ filter: p.filter }, { filter: p.trace_filter }, { tree_filter: p.tree_filter }]) {
    if (!Object.values(filters)[0]) continue;
    const found = await allRuns(tenant, { ...scope, is_root: true, ...filters, select: ["id"] });
    if (!found.length) return undefined;
  }
  return summary(thread, roots, runs);
}

function summary(thread_id: string, roots: Wire[], runs: Wire[]) {
  roots.sort(
    (a, b) =>
      String(a.start_time).localeCompare(String(b.start_time)) || String(a.id).localeCompare(String(b.id)),
  );
  const [first, last] = [roots[0], roots[roots.length - 1]];
  const figures = aggregateRunStats(roots as unknown as StatRun[]);
  const usage = aggregateRunStats(runs as unknown as StatRun[]);
  const errored = roots.filter((r) => r.status === "error");
  return {
    thread_id,
    count: roots.length,
    first_trace_id: String(first.id),
    last_trace_id: String(last.id),
    trace_id: String(last.id),
    min_start_time: String(first.start_time),
    max_start_time: String(last.start_time),
    start_time: String(last.start_time),
    num_errored_turns: errored.length,
    latency_p50: figures.latency_p50,
    latency_p99: figures.latency_p99,
    total_tokens: usage.total_tokens,
    total_cost: usage.total_cost,
    total_token_details: detailSums(runs, ["prompt_token_details", "completion_token_details"]),
    total_cost_details: detailSums(runs, ["prompt_cost_details", "completion_cost_details"]),
    feedback_stats: usage.feedback_stats ?? {},
    first_inputs: null as string | null,
    last_outputs: null as string | null,
    last_error: null as string | null,
    /** The most recent failing trace, whose error is previewed (not answered). */
    _errored: errored.length ? String(errored[errored.length - 1].id) : undefined,
  };
}

/** Fills the previews of a page of threads: first inputs, last outputs, the last error. */
async function withPreviews(tenant: string, threads: ReturnType<typeof summary>[]) {
  const ids = threads.flatMap((t) => [
    t.first_trace_id,
    t.last_trace_id,
    ...(t._errored ? [t._errored] : []),
  ]);
  const runs = await runsById(tenant, [...new Set(ids)], ["inputs", "outputs", "error"]);
  for (const t of threads) {
    t.first_inputs = preview(runs.get(t.first_trace_id)?.inputs);
    t.last_outputs = preview(runs.get(t.last_trace_id)?.outputs);
    const error = t._errored ? runs.get(t._errored)?.error : undefined;
    t.last_error = preview(typeof error === "string" || error == null ? error : JSON.stringify(error));
    delete t._errored;
  }
}

/** Every project id of the workspace. */
async function allProjectIds(tenant: string) {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await listProjects(tenant, { limit: 100, offset });
    ids.push(...page.map((p) => p.id));
    if (page.length < 100) return ids;
  }
}

const USAGE_SELECTS = [
  "PROMPT_TOKENS",
  "COMPLETION_TOKENS",
  "TOTAL_TOKENS",
  "PROMPT_COST",
  "COMPLETION_COST",
  "TOTAL_COST",
  "FIRST_TOKEN_TIME",
];

export interface ThreadTracesQuery {
  /** Without it, every project of the workspace. */
  project_id?: string;
  filter?: string;
  selects?: string[];
  page_size: number;
  cursor?: string;
}

/** GET /api/v2/threads/{thread_id}/traces: the thread's traces in the order they started (turn order). */
export async function threadTraces(tenant: string, thread: string, p: ThreadTracesQuery) {
  const after = decodeKeyset(p.cursor, "query");
  const sessions = p.project_id ? [p.project_id] : await allProjectIds(tenant);
  const roots = (
    await Promise.all(
      sessions.map((session) =>
        allRuns(
          tenant,
          { thread: { session, id: thread }, is_root: true, select: ["thread_id", "start_time"] },
          config.runs.statsMaxRuns,
        ),
      ),
    )
  ).flat();
  // A thread is its traces: none, no thread (a label, not a record: another workspace's is no different).
  if (!roots.length) throw new NotFound("Thread not found");
  // Several projects are read one after the other: turn order is start order across them.
  roots.sort(
    (a, b) =>
      String(a.start_time).localeCompare(String(b.start_time)) || String(a.id).localeCompare(String(b.id)),
  );
  const turns = new Map(roots.map((r, i) => [String(r.id), i + 1]));
  let kept = roots;
  if (p.filter) {
    const matching = new Set<string>();
    for (let i = 0; i < roots.length; i += 100) {
      const ids = roots.slice(i, i + 100).map((r) => String(r.id));
      const found = await allRuns(tenant, { id: ids, filter: p.filter, select: ["id"] });
      for (const r of found) matching.add(String(r.id));
    }
    kept = roots.filter((r) => matching.has(String(r.id)));
  }
  const from = after
    ? kept.findIndex(
        (r) => String(r.start_time) > after.t || (r.start_time === after.t && String(r.id) > after.id),
      )
    : 0;
  const page = from < 0 ? [] : kept.slice(from, from + p.page_size);
  const more = from >= 0 && from + p.page_size < kept.length;
  const selects = p.selects ?? [];
  const full = await runsById(
    tenant,
    page.map((r) => String(r.id)),
    readsOf(THREAD_TRACE_SELECTS, selects, ["id"]),
  );
  const usage = selects.some((s) => USAGE_SELECTS.includes(s));
  const items = await Promise.all(
    page.map(async (r) => {
      const id = String(r.id);
      // A trace's tokens and costs are its runs' (its root, a chain, has none of its own).
      const run = { ...full.get(id), ...(usage ? await traceUsage(tenant, id) : {}) };
      return {
        ...project(THREAD_TRACE_SELECTS, run, selects),
        trace_id: id,
        ...(selects.includes("TURN_NUMBER") ? { turn_number: turns.get(id) } : {}),
      };
    }),
  );
  const last = page[page.length - 1];
  return {
    items,
    next_cursor: more && last ? encodeKeyset({ t: String(last.start_time), id: String(last.id) }) : null,
  };
}
