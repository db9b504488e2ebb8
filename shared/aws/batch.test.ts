import { afterEach, describe, expect, it, vi } from "vitest";
import { untilProcessed } from "./batch.ts";

describe("untilProcessed", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends again what comes back unprocessed until nothing is left", async () => {
    const sent: number[][] = [];
    vi.useFakeTimers();
    const done = untilProcessed("BatchWriteItem", "items", [1, 2, 3], async (pending) => {
      sent.push(pending);
      return pending.slice(1);
    });
    await vi.runAllTimersAsync();
    await done;
    expect(sent).toEqual([[1, 2, 3], [2, 3], [3]]);
  });

  it("gives up after 10 calls, saying how much was left", async () => {
    let calls = 0;
    vi.useFakeTimers();
    const done = untilProcessed("BatchGetItem", "keys", ["a", "b"], async (pending) => {
      calls++;
      return pending;
    });
    const failed = expect(done).rejects.toThrow("BatchGetItem left 2 keys unprocessed");
    await vi.runAllTimersAsync();
    await failed;
    expect(calls).toBe(10);
  });
});
