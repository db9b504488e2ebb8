import { ApiError, api } from "./api.ts";
import type { Run, RunQueryPage } from "./wire.ts";

export { percentile } from "../../shared/percentile.ts";

// The console's formatting helpers. Everything returns text: nothing from data becomes HTML.

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

/** A moment in the reader's locale and time zone, to the second; "—" for none. */
export const when = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—";
/** A time of day in the reader's time zone (24 h). */
export const time = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour12: false });
/** An id's first eight characters, as lists show it. */
export const shortId = (id: string) => id.slice(0, 8);

/** An assistant by its name, with its graph when the name is not the graph's. */
export const assistantLabel = (a: { name?: string; graph_id: string }) =>
  a.name && a.name !== a.graph_id ? `${a.name} (${a.graph_id})` : a.graph_id;

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

/** The runs a run query matches, page after page (100 a page), until `cap`; `capped` when more were left. */
export async function queryRuns(
  body: Record<string, unknown>,
  cap: number,
  signal: AbortSignal,
): Promise<{ runs: Run[]; capped: boolean }> {
  const runs: Run[] = [];
  let cursor: string | null = null;
  do {
    const page: RunQueryPage = await api(
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
