import { describe, expect, it } from "vitest";
import { percentile } from "./percentile.ts";

describe("percentile", () => {
  it("takes p in percent, as p50 and p99 are named", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
  });

  it("is the nearest rank: a value of the list, the smallest with at least p% at or below it", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 51)).toBe(3);
    expect(percentile([1, 2, 3, 4], 75)).toBe(3);
    expect(percentile([1, 2, 3, 4], 76)).toBe(4);
    expect(percentile([10, 20], 0)).toBe(10);
  });

  it("reads values in any order and leaves the list as it was", () => {
    const values = [9, 1, 5, 3, 7];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 99)).toBe(9);
    expect(values).toEqual([9, 1, 5, 3, 7]);
  });

  it("has no figure for no values", () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([7], 99)).toBe(7);
  });
});
