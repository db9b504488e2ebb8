import { describe, expect, it } from "vitest";
import { forEachLimit } from "./concurrency.ts";

describe("forEachLimit", () => {
  it("visits every item once, never more than `limit` at a time", async () => {
    let running = 0;
    let peak = 0;
    const seen: number[] = [];
    await forEachLimit([...Array(20).keys()], 3, async (n, i) => {
      expect(i).toBe(n);
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n % 4));
      seen.push(n);
      running--;
    });
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    expect(peak).toBe(3);
  });

  it("does nothing for no items", async () => {
    await forEachLimit([], 8, async () => {
      throw new Error("not called");
    });
  });
});
