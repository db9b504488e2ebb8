import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nestedDeeperThan } from "./json-depth.ts";

// Untrusted input: any JSON text, and text that is not JSON at all. The contract: the depth JSON.parse would
// build, read without parsing (brackets in strings, escaped quotes included); never a throw.
const depthOf = (v: unknown): number =>
  v !== null && typeof v === "object" ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;

const nested = (depth: number, asArray: boolean) => {
  const [open, close] = asArray ? ["[", "]"] : ['{"k":', "}"];
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
};

describe("nestedDeeperThan", () => {
  it("agrees with the depth of what JSON.parse builds", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (text, max) => {
        expect(nestedDeeperThan(text, max)).toBe(depthOf(JSON.parse(text)) > max);
      }),
      { numRuns: 2000 },
    );
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    expect(nestedDeeperThan(JSON.stringify({ a: '[[[{{{\\"[[[' }), 1)).toBe(false);
    expect(nestedDeeperThan(JSON.stringify(["\\", [["x"]]]), 2)).toBe(true);
  });

  it("reads a body nested 100,000 deep without a stack", () => {
    expect(nestedDeeperThan(nested(100_000, true), 64)).toBe(true);
    expect(nestedDeeperThan(nested(64, false), 64)).toBe(false);
    expect(nestedDeeperThan(nested(65, false), 64)).toBe(true);
  });

  it("never throws on text that is not JSON", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.nat(100), (text, max) => {
        expect(typeof nestedDeeperThan(text, max)).toBe("boolean");
      }),
    );
  });
});
