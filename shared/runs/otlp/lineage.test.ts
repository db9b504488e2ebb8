import { describe, expect, it } from "vitest";
import { dottedSegment, type KnownSpan, type LinkedSpan, linkSpan, settle, spanKey } from "./lineage.ts";
import { type SpanRun, uuidOfSpanId, uuidOfTraceId } from "./map.ts";

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const run = (spanId: string, parentSpanId: string, start: string, over: Partial<SpanRun> = {}): SpanRun => ({
  id: uuidOfSpanId(spanId),
  trace_id: uuidOfTraceId(TRACE),
  parent_run_id: parentSpanId ? uuidOfSpanId(parentSpanId) : null,
  name: spanId,
  run_type: "chain",
  start_time: start,
  end_time: null,
  inputs: {},
  outputs: null,
  error: null,
  extra: { metadata: {} },
  events: [],
  tags: [],
  ...over,
});
const span = (spanId: string, parentSpanId: string, start: string, over: Partial<SpanRun> = {}) =>
  linkSpan(run(spanId, parentSpanId, start, over), TRACE, spanId, parentSpanId);
const ROOT = "00f067aa0ba902b7";
const CHILD = "11f067aa0ba902b7";
const GRANDCHILD = "22f067aa0ba902b7";
const traceUuid = uuidOfTraceId(TRACE);

describe("OTLP run lineage", () => {
  it("a dotted-order segment is the start as %Y%m%dT%H%M%S%fZ then the run id, as the SDKs write it", () => {
    expect(dottedSegment("2026-11-28T08:00:01.123456Z", "x")).toBe("20261128T080001123456Zx");
    expect(dottedSegment("2026-11-28T08:00:01Z", "x")).toBe("20261128T080001000000Zx");
  });

  it("every run's trace_id is its root run's id, and a run's id is its span id's (as langsmith's OTEL mode gives them)", () => {
    const spans = [
      span(CHILD, ROOT, "2026-11-28T08:00:01.000000Z"),
      span(ROOT, "", "2026-11-28T08:00:00.000000Z"),
    ];
    expect(settle(spans, new Map())).toEqual([]);
    const [child, root] = spans.map((s) => s.run);
    expect(root!.id).toBe(uuidOfSpanId(ROOT));
    expect(root!.trace_id).toBe(root!.id);
    expect(child!.id).toBe(uuidOfSpanId(CHILD));
    expect(child!.trace_id).toBe(root!.id);
    expect(child!.parent_run_id).toBe(root!.id);
  });

  it("children listed before their parents get dotted orders that extend their parent's", () => {
    const spans = [
      span(GRANDCHILD, CHILD, "2026-11-28T08:00:02.000000Z"),
      span(CHILD, ROOT, "2026-11-28T08:00:01.000000Z"),
      span(ROOT, "", "2026-11-28T08:00:00.000000Z"),
    ];
    settle(spans, new Map());
    const [g, c, r] = spans.map((s) => s.run);
    expect(r!.dotted_order).toBe(`20261128T080000000000Z${r!.id}`);
    expect(g!.trace_id).toBe(r!.id);
    expect(c!.dotted_order).toBe(`${r!.dotted_order}.20261128T080001000000Z${c!.id}`);
    expect(g!.dotted_order).toBe(`${c!.dotted_order}.20261128T080002000000Z${g!.id}`);
    expect(g!.parent_run_id).toBe(c!.id);
  });

  it("a span whose parent is neither in the batch nor known waits; a known parent settles it", () => {
    const alone = () => [span(GRANDCHILD, CHILD, "2026-11-28T08:00:02.000000Z")];
    const waiting = alone();
    expect(settle(waiting, new Map())).toHaveLength(1);
    expect(waiting[0]!.run.dotted_order).toBeUndefined();
    const known = new Map<string, KnownSpan>([
      [
        spanKey(traceUuid, CHILD),
        { id: "parent-id", trace_id: "root", dotted_order: "20261128T080000000000Zroot.x" },
      ],
    ]);
    const settled = alone();
    expect(settle(settled, known)).toEqual([]);
    expect(settled[0]!.run.parent_run_id).toBe("parent-id");
    expect(settled[0]!.run.trace_id).toBe("root");
    expect(settled[0]!.run.dotted_order).toMatch(/^20261128T080000000000Zroot\.x\.20261128T080002000000Z/);
  });

  it("a parent known without a dotted order gives its id, and the child still waits", () => {
    const spans = [span(GRANDCHILD, CHILD, "2026-11-28T08:00:02.000000Z")];
    const known = new Map<string, KnownSpan>([
      [spanKey(traceUuid, CHILD), { id: "p", trace_id: "root", dotted_order: null }],
    ]);
    expect(settle(spans, known)).toHaveLength(1);
    expect(spans[0]!.run.parent_run_id).toBe("p");
  });

  it("spans naming each other as parents (a loop) settle nothing and do not hang", () => {
    const spans: LinkedSpan[] = [
      span(CHILD, GRANDCHILD, "2026-11-28T08:00:01.000000Z"),
      span(GRANDCHILD, CHILD, "2026-11-28T08:00:02.000000Z"),
    ];
    expect(settle(spans, new Map())).toHaveLength(2);
  });

  it("ids and dotted orders set by langsmith's own exporter are kept as sent", () => {
    const id = "01936f2c-0000-7000-8000-000000000001";
    const dotted = `20261128T080000000000Z${id}`;
    const s = span(ROOT, "", "2026-11-28T08:00:00.000000Z", { id, trace_id: id, dotted_order: dotted });
    expect(s.fixed).toBe(true);
    settle([s], new Map());
    expect(s.run.id).toBe(id);
    expect(s.run.dotted_order).toBe(dotted);
  });
});
