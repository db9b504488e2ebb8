import type { SpanRun } from "./map.ts";
import { uuidOfSpanId, uuidOfTraceId } from "./map.ts";

// Lineage of OTLP spans as LangSmith keeps it: a run's id is its span id's (as langsmith's own OTEL mode gives
// its runs), and a trace is found by its root's id, so every run's trace_id is its root run's id (langsmith's
// `traceable` sets a root's trace_id to its own id for that reason); each run's dotted_order is its parent's plus
// its own `<start>Z<id>` segment, as the SDKs write it. Spans come in any order and any request: what one batch
// cannot settle (a parent sent later, or earlier in another request) is settled by shared/runs/otlp-lineage.ts.

/** A mapped span with the OTLP ids it came with. */
export interface LinkedSpan {
  run: SpanRun;
  /** The OTLP trace id as a UUID: the key spans of one trace are found by (not the runs' trace_id). */
  trace: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  /** Ids set by langsmith's own exporter (langsmith.span.id / dotted_order): kept as sent. */
  fixed: boolean;
}

/** What is known of a run a span may name as its parent. */
export interface KnownSpan {
  id: string;
  /** Its root run's id. */
  trace_id: string;
  dotted_order: string | null;
}

/** The dotted-order segment of a run: its start as `%Y%m%dT%H%M%S%fZ`, then its id. */
export function dottedSegment(start: string, id: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$/.exec(start);
  if (!m) throw new RangeError(`not a canonical UTC time: ${start}`);
  const micros = (m[7] ?? "").padEnd(6, "0");
  return `${m[1]}${m[2]}${m[3]}T${m[4]}${m[5]}${m[6]}${micros}Z${id}`;
}

/** The key of a span within a tenant's traces. */
export const spanKey = (trace: string, spanId: string) => `${trace}/${spanId}`;

/** A span's run as far as the span alone tells: a root is its own trace; a child's trace is settled later. */
export function linkSpan(run: SpanRun, traceIdHex: string, spanId: string, parentSpanId: string): LinkedSpan {
  const trace = uuidOfTraceId(traceIdHex);
  const fixed = run.dotted_order !== undefined || run.id !== uuidOfSpanId(spanId);
  const root = run.parent_run_id === null;
  if (root && !fixed) run.trace_id = run.id;
  return { run, trace, spanId, parentSpanId: root ? "" : parentSpanId, fixed };
}

/**
 * Settles what the batch itself and `known` (runs found in storage by span key) settle: each span whose parent is
 * settled gets the parent's id and its dotted order. Answers the spans left unsettled (their parent is unknown).
 */
export function settle(spans: LinkedSpan[], known: ReadonlyMap<string, KnownSpan>): LinkedSpan[] {
  const byKey = new Map(spans.map((s) => [spanKey(s.trace, s.spanId), s]));
  const done = new Map<string, KnownSpan>();
  const visiting = new Set<string>();
  const resolve = (s: LinkedSpan): KnownSpan | undefined => {
    const key = spanKey(s.trace, s.spanId);
    if (done.has(key)) return done.get(key);
    if (s.run.dotted_order !== undefined) return remember(key, s);
    if (s.parentSpanId === "") {
      s.run.dotted_order = dottedSegment(s.run.start_time, s.run.id);
      return remember(key, s);
    }
    // A parent loop (a span naming its own descendant) settles nothing.
    if (visiting.has(key)) return undefined;
    visiting.add(key);
    const parentKey = spanKey(s.trace, s.parentSpanId);
    const inBatch = byKey.get(parentKey);
    const parent = inBatch ? resolve(inBatch) : known.get(parentKey);
    visiting.delete(key);
    if (!parent) {
      if (inBatch) s.run.parent_run_id = inBatch.run.id;
      return undefined;
    }
    s.run.parent_run_id = parent.id;
    if (!s.fixed) s.run.trace_id = parent.trace_id;
    if (parent.dotted_order === null) return undefined;
    s.run.dotted_order = `${parent.dotted_order}.${dottedSegment(s.run.start_time, s.run.id)}`;
    return remember(key, s);
  };
  const remember = (key: string, s: LinkedSpan) => {
    const k = { id: s.run.id, trace_id: s.run.trace_id, dotted_order: s.run.dotted_order ?? null };
    done.set(key, k);
    return k;
  };
  return spans.filter((s) => !resolve(s));
}
