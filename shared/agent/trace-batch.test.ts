import { describe, expect, it } from "vitest";
import type { ingestBatch } from "../runs/ingest.ts";
import { TraceBatch } from "./trace-batch.ts";

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
});
