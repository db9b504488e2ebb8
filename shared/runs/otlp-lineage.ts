import { batchGet, batchWrite } from "../aws/batch.ts";
import { conditionalUpdate, queryAll } from "../aws/ddb.ts";
import { forEachLimit } from "../concurrency.ts";
import { type OtlpAwaitRecord, type OtlpSpanPointer, traceRunKeys } from "../records/runs.ts";
import { type Lineage, lineageOf } from "./lineage.ts";
import { dottedSegment, type KnownSpan, type LinkedSpan, settle, spanKey } from "./otlp/lineage.ts";
import { uuidOfSpanId } from "./otlp/map.ts";
import { recordExpiry } from "./tiers.ts";

// OTLP spans whose parent is not in their request: the parent is looked up among stored runs (by the span id's
// run id, or the pointer a langsmith-named span leaves); a span whose parent is not stored yet is stored
// as it is and leaves an await record in the trace's root partition. Whoever stores a parent later settles the
// runs awaiting it (their parent id and dotted order), down the tree. Each side writes first and reads the other
// after, so a parent and its child stored at the same moment in two requests still meet.

type Tenant = string;

/** What storage knows of the parents the unsettled spans name. */
async function lookUp(tenant: Tenant, spans: LinkedSpan[]): Promise<Map<string, KnownSpan>> {
  const wanted = new Map(spans.map((s) => [spanKey(s.trace, s.parentSpanId), s]));
  const known = new Map<string, KnownSpan>();
  if (!wanted.size) return known;
  const keys = [...wanted.values()].flatMap((s) => [
    traceRunKeys.otelSpan(tenant, s.trace, s.parentSpanId),
    traceRunKeys.run(tenant, uuidOfSpanId(s.parentSpanId)),
  ]);
  const found = await batchGet<Partial<OtlpSpanPointer> & { id?: string; PK: string; SK: string }>(
    "runs",
    keys,
    {
      projection: "PK, SK, id, trace_id, dotted_order, run_id",
    },
  );
  // A pointer wins over a run item: it names the run a langsmith-named span became.
  for (const pass of ["run", "pointer"] as const)
    for (const item of found)
      for (const s of wanted.values()) {
        const pointer = traceRunKeys.otelSpan(tenant, s.trace, s.parentSpanId);
        const matches =
          pass === "pointer"
            ? item.PK === pointer.PK && item.SK === pointer.SK && typeof item.run_id === "string"
            : item.SK === "run" && item.id === uuidOfSpanId(s.parentSpanId);
        if (matches && typeof item.trace_id === "string")
          known.set(spanKey(s.trace, s.parentSpanId), {
            id: pass === "pointer" ? item.run_id! : item.id!,
            trace_id: item.trace_id,
            dotted_order: item.dotted_order ?? null,
          });
      }
  return known;
}

/** Settles the batch with what is stored; answers the spans still waiting for a parent. */
export async function settleBatch(tenant: Tenant, spans: LinkedSpan[]): Promise<LinkedSpan[]> {
  const open = settle(spans, new Map());
  if (!open.length) return [];
  return settle(spans, await lookUp(tenant, open));
}

/** After the runs are stored: pointers for runs whose id is not their span id's, await records, settling. */
export async function afterStore(tenant: Tenant, spans: LinkedSpan[], waiting: LinkedSpan[]): Promise<void> {
  const expires_at = recordExpiry();
  const pointers = spans
    .filter((s) => s.run.id !== uuidOfSpanId(s.spanId))
    .map((s) => ({
      put: {
        ...traceRunKeys.otelSpan(tenant, s.trace, s.spanId),
        run_id: s.run.id,
        span_id: s.spanId,
        trace_id: s.run.trace_id,
        dotted_order: s.run.dotted_order ?? null,
        expires_at,
      } satisfies OtlpSpanPointer,
    }));
  const awaits = waiting.map((s) => ({
    put: {
      ...traceRunKeys.otelAwait(tenant, s.trace, s.parentSpanId, s.spanId),
      run_id: s.run.id,
      span_id: s.spanId,
      parent_span_id: s.parentSpanId,
      start_time: s.run.start_time,
      expires_at,
    } satisfies OtlpAwaitRecord,
  }));
  const flags = [...new Set(waiting.map((s) => s.trace))].map((trace) => ({
    put: { ...traceRunKeys.otelPending(tenant, trace), expires_at },
  }));
  const writes = [...pointers, ...awaits, ...flags];
  if (writes.length) await batchWrite("runs", writes, { parallel: true });
  // The other side: a parent stored meanwhile by another request (for the spans that wait), and the runs that
  // wait for the spans settled here.
  if (waiting.length) {
    const known = await lookUp(tenant, waiting);
    const roots = new Map<string, Root[]>();
    for (const s of waiting) {
      const parent = known.get(spanKey(s.trace, s.parentSpanId));
      if (parent?.dotted_order)
        roots.set(s.trace, [
          ...(roots.get(s.trace) ?? []),
          [s.parentSpanId, { ...parent, dotted_order: parent.dotted_order }],
        ]);
    }
    for (const [trace, parents] of roots) await settleStored(tenant, trace, parents);
  }
  const settled = spans.filter((s) => s.run.dotted_order !== undefined && !waiting.includes(s));
  for (const trace of await pendingTraces(tenant, settled)) {
    const awaited = await awaitsOf(tenant, trace);
    if (!awaited.length) continue;
    const parents = settled
      .filter((x) => x.trace === trace)
      .map(
        (s): Root => [
          s.spanId,
          { id: s.run.id, trace_id: s.run.trace_id, dotted_order: s.run.dotted_order! },
        ],
      );
    await settleStored(tenant, trace, parents, awaited);
  }
}

/** The traces of `spans` that have had runs awaiting a parent (most have none: one read for the batch). */
async function pendingTraces(tenant: Tenant, spans: LinkedSpan[]): Promise<string[]> {
  const traces = [...new Set(spans.map((s) => s.trace))];
  if (!traces.length) return [];
  const flags = await batchGet<{ PK: string }>(
    "runs",
    traces.map((t) => traceRunKeys.otelPending(tenant, t)),
    { projection: "PK" },
  );
  const flagged = new Set(flags.map((f) => f.PK));
  return traces.filter((t) => flagged.has(traceRunKeys.otelPending(tenant, t).PK));
}

function awaitsOf(tenant: Tenant, trace: string): Promise<OtlpAwaitRecord[]> {
  const pk = traceRunKeys.otelAwait(tenant, trace, "", "").PK;
  return queryAll<OtlpAwaitRecord>("runs", {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
    values: { ":pk": pk, ":prefix": "otel_await#" },
    ConsistentRead: true,
  });
}

/** A span stored with its run, whose lineage the runs awaiting it take. */
type Root = [spanId: string, parent: KnownSpan & { dotted_order: string }];

/**
 * The stored runs waiting for the `roots` of `trace`, and theirs in turn, get their lineage: a level of the tree at
 * a time, its runs updated side by side, then the await records settled removed in one batch (one left by a
 * failure is settled again, to the same lineage, by the next span of the trace).
 */
async function settleStored(
  tenant: Tenant,
  trace: string,
  roots: Root[],
  awaited?: OtlpAwaitRecord[],
): Promise<void> {
  const all = awaited ?? (await awaitsOf(tenant, trace));
  const settledAwaits: { delete: ReturnType<typeof traceRunKeys.otelAwait> }[] = [];
  const seen = new Set<string>();
  for (let level = roots; level.length; ) {
    const next: Root[] = [];
    const updates: { runId: string; dotted_order: string; lineage: Lineage }[] = [];
    for (const [span, p] of level) {
      if (seen.has(span)) continue;
      seen.add(span);
      for (const a of all.filter((x) => x.parent_span_id === span)) {
        const dotted_order = `${p.dotted_order}.${dottedSegment(a.start_time, a.run_id)}`;
        const lineage = lineageOf({ id: a.run_id, dotted_order, trace_id: p.trace_id, parent_run_id: p.id });
        updates.push({ runId: a.run_id, dotted_order, lineage });
        next.push([a.span_id, { id: a.run_id, trace_id: p.trace_id, dotted_order }]);
        settledAwaits.push({ delete: traceRunKeys.otelAwait(tenant, trace, span, a.span_id) });
      }
    }
    await forEachLimit(updates, 8, async ({ runId, dotted_order, lineage }) => {
      await conditionalUpdate("runs", traceRunKeys.run(tenant, runId), {
        set: {
          ...lineage,
          dotted_order,
          GSI2PK: traceRunKeys.trace(tenant, lineage.trace_id),
          GSI2SK: dotted_order,
        },
      });
    });
    level = next;
  }
  if (settledAwaits.length) await batchWrite("runs", settledAwaits, { parallel: true });
}
