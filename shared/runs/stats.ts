import { config } from "../config.ts";
import { dict } from "../dict.ts";
import { validationError } from "../errors.ts";
import { percentile } from "../percentile.ts";
import { queryRuns, type RunQuery } from "./query.ts";
import type { RunField } from "./wire.ts";

// POST /runs/stats (the langsmith SDK's getRunStats): figures over every run the filters match — counts,
// latency and time-to-first-token percentiles (seconds), token and cost sums, error and streaming rates, the
// newest start and the feedback merged over the runs. Read through the run query, its budget and all, up to
// RUNS_STATS_MAX_RUNS matching runs: more is a 422 asking for a narrower filter, never a partial figure.

/** What a run contributes to the figures. */
export interface StatRun {
  start_time: string;
  end_time: string | null;
  status: string;
  first_token_time: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  feedback_stats: Record<string, { n: number; avg: number | null; values?: Record<string, number> }> | null;
}

const STAT_FIELDS: RunField[] = [
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
  "feedback_stats",
];

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;
const sum = (xs: readonly (number | null)[]) => {
  const present = xs.filter((x): x is number => typeof x === "number");
  return present.length ? present.reduce((a, b) => a + b, 0) : null;
};

export function aggregateRunStats(runs: readonly StatRun[]) {
  const latencies = runs.flatMap((r) => (r.end_time ? [seconds(r.start_time, r.end_time)] : []));
  const firstTokens = runs.flatMap((r) =>
    r.first_token_time ? [seconds(r.start_time, r.first_token_time)] : [],
  );
  const tokens = runs.flatMap((r) => (r.total_tokens > 0 ? [r.total_tokens] : []));
  // Feedback keys and values are the callers' words: maps without a prototype (a key `__proto__` is a key).
  const feedback = dict<{ n: number; avg: number | null; values: Record<string, number> }>();
  const scored = dict<{ n: number; total: number }>();
  for (const r of runs)
    for (const [key, s] of Object.entries(r.feedback_stats ?? {})) {
      feedback[key] ??= { n: 0, avg: null, values: dict() };
      const f = feedback[key];
      f.n += s.n;
      for (const [v, n] of Object.entries(s.values ?? {})) f.values[v] = (f.values[v] ?? 0) + n;
      if (typeof s.avg === "number") {
        scored[key] ??= { n: 0, total: 0 };
        const t = scored[key];
        t.n += s.n;
        t.total += s.avg * s.n;
      }
    }
  for (const [key, t] of Object.entries(scored)) feedback[key].avg = t.n ? t.total / t.n : null;
  return {
    run_count: runs.length,
    latency_p50: percentile(latencies, 50),
    latency_p99: percentile(latencies, 99),
    first_token_p50: percentile(firstTokens, 50),
    first_token_p99: percentile(firstTokens, 99),
    prompt_tokens: runs.reduce((n, r) => n + r.prompt_tokens, 0),
    completion_tokens: runs.reduce((n, r) => n + r.completion_tokens, 0),
    total_tokens: runs.reduce((n, r) => n + r.total_tokens, 0),
    median_tokens: percentile(tokens, 50),
    prompt_cost: sum(runs.map((r) => r.prompt_cost)),
    completion_cost: sum(runs.map((r) => r.completion_cost)),
    total_cost: sum(runs.map((r) => r.total_cost)),
    error_rate: runs.length ? runs.filter((r) => r.status === "error").length / runs.length : null,
    streaming_rate: runs.length ? firstTokens.length / runs.length : null,
    last_run_start_time: runs.reduce<string | null>(
      (m, r) => (m && m >= r.start_time ? m : r.start_time),
      null,
    ),
    feedback_stats: Object.keys(feedback).length ? feedback : null,
  };
}

/** The figures over every run `q` matches (read page after page through the run query). */
export async function runStats(tenant: string, q: Omit<RunQuery, "limit" | "cursor" | "select">) {
  const max = config.runs.statsMaxRuns;
  const runs: StatRun[] = [];
  let cursor: string | undefined;
  do {
    const page = await queryRuns(tenant, { ...q, select: STAT_FIELDS, limit: 1000, cursor });
    runs.push(...(page.runs as unknown as StatRun[]));
    if (runs.length > max)
      throw validationError(
        ["body"],
        `more than ${max} runs match: narrow the time range (start_time, end_time) or the filter`,
        "too_many_runs",
      );
    cursor = page.cursors.next ?? undefined;
  } while (cursor);
  return aggregateRunStats(runs);
}
