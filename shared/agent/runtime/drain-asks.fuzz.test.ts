import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DrainAsks, MAX_DRAINS_PER_ANSWER, threadOfDrainHeader } from "./drain-asks.ts";

// What a runtime (a deployment's code) sends as drain asks is untrusted: any header value or JSON value.
describe("drain asks (fuzz)", () => {
  it("any header value gives a string or undefined, never a throw", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (v) => {
        const t = threadOfDrainHeader(v);
        expect(t === undefined || typeof t === "string").toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("any sequence of asks starts at most MAX_DRAINS_PER_ANSWER distinct well-formed threads", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 140 }), fc.jsonValue()), { maxLength: 300 }),
        (xs) => {
          const asks = new DrainAsks();
          const taken = xs.map((x) => asks.take(x)).filter((t) => t !== undefined);
          expect(new Set(taken).size).toBe(taken.length);
          expect(taken.length).toBeLessThanOrEqual(MAX_DRAINS_PER_ANSWER);
          for (const t of taken) expect(t.length > 0 && t.length <= 128).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
