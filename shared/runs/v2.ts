import { NotFound, validationError } from "../errors.ts";
import { canonicalTime } from "../time.ts";
import { queryRuns, type RunQuery } from "./query.ts";
import { project, RUN_SELECTS, readsOf } from "./v2-select.ts";
import type { RunField } from "./wire.ts";

// The /api/v2 run and trace reads (the langsmith SDK's client.runs and client.traces) over the v1 run query:
// the same filters, store reads and cursors, answered in the v2 shapes ({items, next_cursor}, upper-case
// selects). Where v1 reads by id or by trace it ignores the project and the time window: checked here.

type Wire = Record<string, unknown>;
const DAY_MS = 86_400_000;

/** A start-time window [min, max): the hosted defaults are the last day up to now. */
export interface Window {
  min: string;
  max: string;
}
export function windowOf(min?: string, max?: string, now = Date.now()): Window {
  return {
    min: canonicalTime(min ?? new Date(now - DAY_MS).toISOString())!,
    max: canonicalTime(max ?? new Date(now).toISOString())!,
  };
}
/** Whether a run started in the window (its upper end included when `closed`). */
const inWindow = (w: Window | undefined, run: Wire, closed = false) => {
  const t = String(run.start_time);
  return !w || (t >= w.min && (closed ? t <= w.max : t < w.max));
};

/** Every run `q` matches, page after page (the read's budget ends pages early; the cursor goes on). */
export async function allRuns(tenant: string, q: Omit<RunQuery, "limit" | "cursor">, max?: number) {
  const runs: Wire[] = [];
  let cursor: string | undefined;
  do {
    const page = await queryRuns(tenant, { ...q, limit: 1000, cursor });
    runs.push(...page.runs);
    if (max !== undefined && runs.length > max)
      throw validationError(
        ["body"],
        `more than ${max} runs match: narrow the time range (min_start_time, max_start_time) or the filter`,
        "too_many_runs",
      );
    cursor = page.cursors.next ?? undefined;
  } while (cursor);
  return runs;
}

/** Runs by id (at most 100 a read), with the fields of `select`. */
export async function runsById(tenant: string, ids: readonly string[], select: readonly RunField[]) {
  const out = new Map<string, Wire>();
  for (let i = 0; i < ids.length; i += 100) {
    const page = await queryRuns(tenant, { id: ids.slice(i, i + 100), select, limit: 100 });
    for (const r of page.runs) out.set(String(r.id), r);
  }
  return out;
}

export interface RunsV2Query {
  project_ids: string[];
  ids?: string[];
  trace_id?: string;
  is_root?: boolean;
  has_error?: boolean;
  run_type?: string;
  reference_examples?: string[];
  filter?: string;
  trace_filter?: string;
  tree_filter?: string;
  min_start_time?: string;
  max_start_time?: string;
  selects?: string[];
  page_size: number;
  cursor?: string;
}

/** `selects` as answered: when absent, the id alone. */
const selected = (selects: readonly string[] | undefined) => (selects?.length ? selects : ["ID"]);

/** POST /api/v2/runs/query: the runs of the projects in the window, newest first. */
export async function queryRunsV2(tenant: string, p: RunsV2Query) {
  const w = windowOf(p.min_start_time, p.max_start_time);
  const selects = selected(p.selects);
  const projects = new Set(p.project_ids);
  const page = await queryRuns(tenant, {
    session: p.project_ids,
    id: p.ids,
    trace: p.trace_id,
    is_root: p.is_root,
    error: p.has_error,
    run_type: p.run_type?.toLowerCase(),
    reference_example: p.reference_examples,
    filter: p.filter,
    trace_filter: p.trace_filter,
    tree_filter: p.tree_filter,
    start_time: w.min,
    end_time: w.max,
    select: readsOf(RUN_SELECTS, selects, ["id", "session_id", "start_time"]),
    limit: p.page_size,
    cursor: p.cursor,
  });
  const items = page.runs
    .filter((r) => projects.has(String(r.session_id)) && inWindow(w, r))
    .map((r) => project(RUN_SELECTS, r, selects));
  return { items, next_cursor: page.cursors.next };
}

/** GET /api/v2/runs/{run_id}: one run of the project (another project's or workspace's is a 404). */
export async function retrieveRunV2(
  tenant: string,
  id: string,
  p: { project_id?: string; selects?: string[] },
) {
  const selects = selected(p.selects);
  const run = (await runsById(tenant, [id], readsOf(RUN_SELECTS, selects, ["id", "session_id"]))).get(id);
  if (!run || (p.project_id && run.session_id !== p.project_id)) throw new NotFound("Run not found");
  return project(RUN_SELECTS, run, selects);
}

/** A trace's usage summed over all its runs (its root, a chain, carries none of its own). */
export async function traceUsage(tenant: string, trace: string) {
  const runs = await allRuns(tenant, {
    trace,
    select: [
      "prompt_tokens",
      "completion_tokens",
      "total_tokens",
      "prompt_cost",
      "completion_cost",
      "total_cost",
      "first_token_time",
    ],
  });
  const sum = (f: string) => runs.reduce((n, r) => n + (Number(r[f]) || 0), 0);
  const costSum = (f: string) => (runs.some((r) => r[f] !== null && r[f] !== undefined) ? sum(f) : null);
  const firsts = runs.map((r) => r.first_token_time).filter((t): t is string => typeof t === "string");
  return {
    prompt_tokens: sum("prompt_tokens"),
    completion_tokens: sum("completion_tokens"),
    total_tokens: sum("total_tokens"),
    prompt_cost: costSum("prompt_cost"),
    completion_cost: costSum("completion_cost"),
    total_cost: costSum("total_cost"),
    first_token_time: firsts.sort()[0] ?? null,
  };
}

/** The selects a trace answers under `trace_aggregates` (over the whole trace); the rest go to `root_run`. */
const AGGREGATES = ["TOTAL_TOKENS", "TOTAL_COST", "FIRST_TOKEN_TIME"];

export interface TracesV2Query {
  project_id: string;
  trace_ids?: string[];
  trace_filter?: string;
  tree_filter?: string;
  min_start_time?: string;
  max_start_time?: string;
  selects?: string[];
  page_size: number;
  cursor?: string;
}

/** POST /api/v2/traces/query: the project's traces (root runs) in the window, newest first. */
export async function queryTracesV2(tenant: string, p: TracesV2Query) {
  const w = windowOf(p.min_start_time, p.max_start_time);
  const aggregates = (p.selects ?? []).filter((s) => AGGREGATES.includes(s));
  const rootSelects = p.selects ? p.selects.filter((s) => !AGGREGATES.includes(s)) : ["ID"];
  const page = await queryRuns(tenant, {
    session: [p.project_id],
    id: p.trace_ids,
    is_root: true,
    // On a root run, its trace's root is itself.
    filter: p.trace_filter,
    tree_filter: p.tree_filter,
    start_time: w.min,
    end_time: w.max,
    select: readsOf(RUN_SELECTS, rootSelects, ["id", "session_id", "start_time", "is_root"]),
    limit: p.page_size,
    cursor: p.cursor,
  });
  const roots = page.runs.filter((r) => r.session_id === p.project_id && r.is_root && inWindow(w, r));
  const items = await Promise.all(
    roots.map(async (r) => {
      const root_run = project(RUN_SELECTS, r, rootSelects);
      if (!aggregates.length) return { root_run };
      const usage = await traceUsage(tenant, String(r.id));
      const trace_aggregates = Object.fromEntries(
        aggregates.map((s) => [s.toLowerCase(), usage[s.toLowerCase() as keyof typeof usage]]),
      );
      return { root_run, trace_aggregates };
    }),
  );
  return { items, next_cursor: page.cursors.next };
}

/** GET /api/v2/traces/{trace_id}/runs: every run of the trace in the project, in start order; none: a 404. */
export async function traceRunsV2(
  tenant: string,
  trace: string,
  p: {
    project_id?: string;
    filter?: string;
    min_start_time?: string;
    max_start_time?: string;
    selects?: string[];
  },
) {
  if ((p.min_start_time === undefined) !== (p.max_start_time === undefined))
    throw validationError(["query", "min_start_time"], "give min_start_time and max_start_time together");
  const w = p.min_start_time ? windowOf(p.min_start_time, p.max_start_time) : undefined;
  const selects = selected(p.selects);
  const runs = await allRuns(tenant, {
    trace,
    filter: p.filter,
    select: readsOf(RUN_SELECTS, selects, ["id", "session_id", "start_time", "dotted_order"]),
  });
  const ours = (r: Wire) => !p.project_id || r.session_id === p.project_id;
  // A filter may match none of a trace's runs; a trace of another project or workspace is a 404.
  if (!runs.some(ours)) {
    const root = (await runsById(tenant, [trace], ["session_id"])).get(trace);
    if (!root || !ours(root)) throw new NotFound("Trace not found");
  }
  const items = runs
    .filter((r) => ours(r) && inWindow(w, r, true))
    .sort(
      (a, b) =>
        String(a.start_time).localeCompare(String(b.start_time)) ||
        String(a.dotted_order ?? "").localeCompare(String(b.dotted_order ?? "")),
    )
    .map((r) => project(RUN_SELECTS, r, selects));
  return { items };
}
