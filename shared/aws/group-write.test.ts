import { describe, expect, it } from "vitest";
import { takeGroup } from "./group-write.ts";
import { DDB_LIMITS } from "./limits.ts";

// How the group commit cuts its queue into calls: by count, by bytes, one write per key per call, in order.
const w = (key: string, bytes: number) => ({ key, bytes });
const keys = (ws: { key: string }[]) => ws.map((x) => x.key);

describe("group commit: cutting calls", () => {
  it("a call holds at most the item count, the rest waits in order", () => {
    const queue = Array.from({ length: 30 }, (_, i) => w(`k${i}`, 100));
    const { group, rest } = takeGroup(queue, DDB_LIMITS.batchWriteItems, DDB_LIMITS.batchWriteBytes);
    expect(group).toHaveLength(25);
    expect(keys(rest)).toEqual(["k25", "k26", "k27", "k28", "k29"]);
  });

  it("a call holds at most the byte budget: 15 writes of ~280 KB make two transactions of 4 MB", () => {
    const queue = Array.from({ length: 15 }, (_, i) => w(`k${i}`, 280_300));
    const first = takeGroup(queue, DDB_LIMITS.transactItems, DDB_LIMITS.transactBytes);
    expect(first.group).toHaveLength(14);
    expect(first.group.reduce((n, x) => n + x.bytes, 0)).toBeLessThanOrEqual(DDB_LIMITS.transactBytes);
    const second = takeGroup(first.rest, DDB_LIMITS.transactItems, DDB_LIMITS.transactBytes);
    expect(keys(second.group)).toEqual(["k14"]);
    expect(second.rest).toEqual([]);
  });

  it("a smaller write later in the queue fills the room a big one left", () => {
    const { group, rest } = takeGroup([w("a", 300), w("b", 800), w("c", 200)], 10, 600);
    expect(keys(group)).toEqual(["a", "c"]);
    expect(keys(rest)).toEqual(["b"]);
  });

  it("the first write always goes, even alone over the budget", () => {
    const { group, rest } = takeGroup([w("a", 900), w("b", 1)], 10, 600);
    expect(keys(group)).toEqual(["a"]);
    expect(keys(rest)).toEqual(["b"]);
  });

  it("one call never holds two writes of one key", () => {
    const { group, rest } = takeGroup([w("a", 1), w("a", 1), w("b", 1)], 10, 600);
    expect(keys(group)).toEqual(["a", "b"]);
    expect(keys(rest)).toEqual(["a"]);
  });

  it("a write never overtakes an earlier write of its key that did not fit", () => {
    const { group, rest } = takeGroup([w("a", 300), w("b", 800), w("b", 10), w("c", 10)], 10, 600);
    expect(keys(group)).toEqual(["a", "c"]);
    expect(rest.map((x) => [x.key, x.bytes])).toEqual([
      ["b", 800],
      ["b", 10],
    ]);
  });
});
