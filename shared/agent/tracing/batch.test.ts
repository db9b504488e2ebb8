import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { ingestBatch } from "../../runs/ingest.ts";
import { cutCalls, fitRun, TraceBatch } from "./batch.ts";

type Call = { posts: unknown[]; patches: { id: string; body: unknown }[] };

/** An ingestion that fails its first `failures` calls (a platform restarting), then records what it gets. */
function flakyIngest(failures: number) {
  const calls: Call[] = [];
  let attempts = 0;
  const ingest: typeof ingestBatch = async (_tenant, posts, patches) => {
    attempts++;
    if (attempts <= failures) throw new Error(`connect ECONNREFUSED (attempt ${attempts})`);
    calls.push({ posts, patches });
    return {
      accepted: [...posts.map((p) => String((p as { id: string }).id)), ...patches.map((p) => p.id)],
      errors: [],
    };
  };
  return { ingest, calls, attempts: () => attempts };
}

describe("TraceBatch", () => {
  it("a run that starts and ends between two flushes is one post; a later end is a patch", async () => {
    const { ingest, calls } = flakyIngest(0);
    const batch = new TraceBatch("t", { flushMs: 60_000, ingest });
    batch.create({ id: "a", name: "a", start_time: "2026-01-01T00:00:00Z" });
    batch.update("a", { end_time: "2026-01-01T00:00:01Z", outputs: { ok: true } });
    batch.create({ id: "b", name: "b", start_time: "2026-01-01T00:00:00Z" });
    await batch.flush();
    batch.update("b", { end_time: "2026-01-01T00:00:02Z" });
    await batch.flush();
    expect(calls).toEqual([
      {
        posts: [
          {
            id: "a",
            name: "a",
            start_time: "2026-01-01T00:00:00Z",
            end_time: "2026-01-01T00:00:01Z",
            outputs: { ok: true },
          },
          { id: "b", name: "b", start_time: "2026-01-01T00:00:00Z" },
        ],
        patches: [],
      },
      { posts: [], patches: [{ id: "b", body: { end_time: "2026-01-01T00:00:02Z" } }] },
    ]);
  });

  it("the timer holds back a run still going whose create is younger than flushMs: it ends as one post", async () => {
    vi.useFakeTimers();
    try {
      const { ingest, calls } = flakyIngest(0);
      const batch = new TraceBatch("t", { flushMs: 1000, ingest });
      batch.create({ id: "a", name: "a", start_time: "2026-01-01T00:00:00Z" });
      await vi.advanceTimersByTimeAsync(500);
      batch.create({ id: "b", name: "b", start_time: "2026-01-01T00:00:00.5Z" });
      await vi.advanceTimersByTimeAsync(500);
      // At 1 s: a (queued 1 s ago) goes unended; b (0.5 s) waits.
      expect(calls).toEqual([
        { posts: [{ id: "a", name: "a", start_time: "2026-01-01T00:00:00Z" }], patches: [] },
      ]);
      batch.update("b", { end_time: "2026-01-01T00:00:01.2Z" });
      batch.update("a", { end_time: "2026-01-01T00:00:01.5Z" });
      await vi.advanceTimersByTimeAsync(1000);
      expect(calls.slice(1)).toEqual([
        {
          posts: [
            { id: "b", name: "b", start_time: "2026-01-01T00:00:00.5Z", end_time: "2026-01-01T00:00:01.2Z" },
          ],
          patches: [{ id: "a", body: { end_time: "2026-01-01T00:00:01.5Z" } }],
        },
      ]);
      // A run that never ends still goes, once its create is flushMs old.
      batch.create({ id: "c", name: "c", start_time: "2026-01-01T00:00:02Z" });
      await vi.advanceTimersByTimeAsync(2000);
      expect(calls.slice(2)).toEqual([
        { posts: [{ id: "c", name: "c", start_time: "2026-01-01T00:00:02Z" }], patches: [] },
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a failed ingestion is retried until it gets through: nothing lost, nothing sent twice", async () => {
    const { ingest, calls, attempts } = flakyIngest(3);
    const batch = new TraceBatch("t", { flushMs: 60_000, ingest, retryDelaysMs: [1, 1, 1, 1, 1] });
    batch.create({ id: "a", name: "a" });
    await batch.flush();
    expect(attempts()).toBe(4);
    expect(calls).toEqual([{ posts: [{ id: "a", name: "a" }], patches: [] }]);
  });

  it("later flushes wait for a retried one: a run's post still lands before its patch", async () => {
    const { ingest, calls } = flakyIngest(2);
    const batch = new TraceBatch("t", { flushMs: 60_000, ingest, retryDelaysMs: [5, 5, 5] });
    batch.create({ id: "a", name: "a" });
    const first = batch.flush();
    batch.update("a", { end_time: "2026-01-01T00:00:01Z" });
    await Promise.all([first, batch.flush()]);
    expect(calls.map((c) => [c.posts.length, c.patches.length])).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it("gives up after its retries (logged, never thrown), and the next batch goes through", async () => {
    const { ingest, calls, attempts } = flakyIngest(3);
    const batch = new TraceBatch("t", { flushMs: 60_000, ingest, retryDelaysMs: [1, 1] });
    batch.create({ id: "lost", name: "lost" });
    await expect(batch.flush()).resolves.toBeUndefined();
    expect(attempts()).toBe(3);
    batch.create({ id: "next", name: "next" });
    await batch.flush();
    expect(calls).toEqual([{ posts: [{ id: "next", name: "next" }], patches: [] }]);
  });

  it("a flush bigger than one call's size goes as several calls, in order, each within the size", async () => {
    const { ingest, calls } = flakyIngest(0);
    const batch = new TraceBatch("t", { flushMs: 60_000, ingest, maxBytes: 10_000 });
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    for (const id of ids) batch.create({ id, name: id, outputs: { text: "x".repeat(3_000) } });
    await batch.flush();
    expect(calls.length).toBeGreaterThan(3);
    expect(calls.flatMap((c) => c.posts.map((p) => (p as { id: string }).id))).toEqual(ids);
    for (const c of calls) expect(Buffer.byteLength(JSON.stringify(c.posts))).toBeLessThanOrEqual(10_000);
  });

  it("a run too big for a call alone keeps its id and small fields; its largest fields say what they were", () => {
    const body = {
      id: "big",
      name: "big",
      inputs: { q: "small" },
      outputs: { text: "y".repeat(50_000) },
      events: [{ name: "start" }],
    };
    const fit = fitRun(body, 5_000);
    expect(fit).toMatchObject({
      id: "big",
      name: "big",
      inputs: { q: "small" },
      events: [{ name: "start" }],
    });
    expect(String((fit.outputs as { __truncated__: string }).__truncated__)).toMatch(
      /^outputs was 50\d{3} bytes/,
    );
    expect(fitRun(fit, 5_000)).toBe(fit);
    expect(body.outputs.text).toHaveLength(50_000);
  });

  it("cutting keeps every run once, posts before patches, each call within the size (property)", () => {
    const run = fc.record({
      id: fc.uuid(),
      name: fc.string({ maxLength: 20 }),
      inputs: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 3_000 }), { maxKeys: 3 }),
      outputs: fc.option(fc.string({ maxLength: 20_000 })),
      events: fc.array(fc.string({ maxLength: 500 }), { maxLength: 5 }),
    });
    fc.assert(
      fc.property(
        fc.array(run, { maxLength: 20 }),
        fc.array(run, { maxLength: 10 }),
        fc.integer({ min: 2_000, max: 40_000 }),
        (posts, ends, max) => {
          const patches = ends.map(({ id, ...body }) => ({ id, body }));
          const { calls, shortened } = cutCalls(posts, patches, max);
          expect(calls.flatMap((c) => c.posts.map((p) => p.id))).toEqual(posts.map((p) => p.id));
          expect(calls.flatMap((c) => c.patches.map((p) => p.id))).toEqual(patches.map((p) => p.id));
          const kinds = calls.flatMap((c) => [...c.posts.map(() => "post"), ...c.patches.map(() => "patch")]);
          expect(kinds.indexOf("patch") === -1 || kinds.lastIndexOf("post") < kinds.indexOf("patch")).toBe(
            true,
          );
          for (const c of calls)
            expect(Buffer.byteLength(JSON.stringify([...c.posts, ...c.patches]))).toBeLessThanOrEqual(
              max + 100 * (c.posts.length + c.patches.length),
            );
          const big = [...posts, ...ends].filter((r) => Buffer.byteLength(JSON.stringify(r)) > max).length;
          expect(shortened.length).toBeGreaterThanOrEqual(big > 0 ? 1 : 0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
