import { ApiError, api } from "../../api.ts";

// Small formatting helpers shared by the traces views. Everything returns text: nothing from data becomes HTML.

/** A run as the run query and GET /runs/{id} answer it (the fields the console reads). */
export interface Run {
  id: string;
  name: string;
  run_type: string;
  status: string;
  start_time: string;
  end_time: string | null;
  trace_id: string;
  session_id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  is_root: boolean;
  inputs: unknown;
  outputs: unknown;
  error: unknown;
  tags: string[];
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  first_token_time: string | null;
  feedback_stats: Record<string, { n: number; avg: number | null; values?: Record<string, number> }> | null;
  messages?: { input_messages: unknown[]; output_messages: unknown[] } | null;
  extra?: { metadata?: Record<string, unknown> } | null;
  format_errors?: string[];
  tokens_estimated?: boolean;
  /** Files sent with the run: `attachment.<name>` → a presigned URL and the file's type. */
  s3_urls?: Record<string, { presigned_url: string; mime_type: string }>;
}

/** A run's start and end as epoch milliseconds (canonical times may carry microseconds). */
export const ms = (t: string | null | undefined) =>
  t ? Date.parse(t.endsWith("Z") ? t : `${t}Z`) : Number.NaN;

/** Latency in ms, or undefined for a run still going. */
export function latencyMs(run: Pick<Run, "start_time" | "end_time">): number | undefined {
  const d = ms(run.end_time) - ms(run.start_time);
  return Number.isFinite(d) ? Math.max(0, d) : undefined;
}

export function fmtDuration(msValue: number | undefined | null): string {
  if (msValue === undefined || msValue === null || !Number.isFinite(msValue)) return "—";
  if (msValue < 1000) return `${Math.round(msValue)} ms`;
  if (msValue < 60_000) return `${(msValue / 1000).toFixed(2)} s`;
  return `${(msValue / 60_000).toFixed(1)} min`;
}

export function fmtCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return "—";
  if (usd === 0) return "$0";
  return usd < 0.01 ? `$${usd.toPrecision(3)}` : `$${usd.toFixed(4)}`;
}

export const fmtNumber = (n: number) => n.toLocaleString("en-US");

export function fmtTime(t: string | null | undefined): string {
  const v = ms(t);
  return Number.isFinite(v) ? new Date(v).toISOString().replace("T", " ").slice(0, 19) : "—";
}

/** An API failure as one line: a 422's messages (the filter's includes its position), else the error text. */
export function errorText(e: unknown): string {
  if (e instanceof ApiError && Array.isArray(e.detail))
    return e.detail
      .map((d: { loc?: unknown[]; msg?: string }) =>
        [Array.isArray(d.loc) ? d.loc.filter((l) => l !== "body").join(".") : "", d.msg ?? JSON.stringify(d)]
          .filter(Boolean)
          .join(": "),
      )
      .join("; ");
  return e instanceof Error ? e.message : String(e);
}

/** JSON for a <pre>, shortened so a huge payload does not freeze the page. */
export function pretty(value: unknown, max = 20_000): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > max
    ? `${text.slice(0, max)}\n… (${fmtNumber(text.length - max)} more characters)`
    : text;
}

/** Percentile (0..1) of a list of numbers, nearest rank; undefined for none. */
export function percentile(values: number[], p: number): number | undefined {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** The runs a run query matches, page after page (100 a page), until `cap`; `capped` when more were left. */
export async function queryRuns(
  body: Record<string, unknown>,
  cap: number,
  signal: AbortSignal,
): Promise<{ runs: Run[]; capped: boolean }> {
  const runs: Run[] = [];
  let cursor: string | null = null;
  do {
    const page: { runs: Run[]; cursors: { next: string | null } } = await api(
      "POST",
      "/api/v1/runs/query",
      { ...body, limit: 100, ...(cursor ? { cursor } : {}) },
      { signal },
    );
    runs.push(...page.runs);
    cursor = page.cursors.next;
  } while (cursor && runs.length < cap);
  return { runs: runs.slice(0, cap), capped: !!cursor };
}
