import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationFailed } from "../errors.ts";
import {
  configProblem,
  FeedbackConfigCreate,
  FeedbackConfigUpdate,
  recategorized,
  scaleOf,
  scaleProblems,
} from "./feedback-configs.ts";

// Untrusted input: any JSON as a create or update body. The contract: parsing never throws; a config it accepts
// to store is usable (no scaleProblems), scores are checked against it without a throw, and a category change is
// a ValidationFailed (422) or a categorical scale of distinct values.
const number = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: false }));
const category = fc.record({
  value: number,
  label: fc.option(fc.constantFrom("a", "b", "c"), { nil: null }),
});
const config = fc.record(
  {
    type: fc.constantFrom("continuous", "categorical", "freeform", "scale"),
    min: fc.option(number, { nil: null }),
    max: fc.option(number, { nil: null }),
    categories: fc.option(fc.array(category, { maxLength: 6 }), { nil: null }),
    allows_multiple_categories: fc.boolean(),
  },
  { requiredKeys: ["type"] },
);
const body = fc.oneof(
  fc.jsonValue(),
  fc.record({
    feedback_key: fc.string({ maxLength: 200 }),
    feedback_config: fc.oneof(config, fc.jsonValue()),
  }),
);

describe("feedback config bodies", () => {
  it("never throw; an accepted config is usable and checks any score", () => {
    fc.assert(
      fc.property(body, fc.oneof(number, fc.boolean()), (b, score) => {
        const parsed = FeedbackConfigCreate.safeParse(b);
        if (!parsed.success) return;
        const c = parsed.data.feedback_config;
        expect(scaleProblems(c)).toEqual([]);
        const problem = configProblem(scaleOf(c), score);
        expect(problem === undefined || typeof problem === "string").toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it("a category change is a 422 or a categorical scale of distinct values", () => {
    const update = fc.record({
      feedback_key: fc.constant("k"),
      add_categories: fc.option(fc.array(category, { maxLength: 4 }), { nil: undefined }),
      remove_categories: fc.option(fc.array(number, { maxLength: 4 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(config, update, (c, u) => {
        const parsed = FeedbackConfigUpdate.safeParse(u);
        if (!parsed.success) return;
        const start = FeedbackConfigCreate.safeParse({ feedback_key: "k", feedback_config: c });
        if (!start.success) return;
        try {
          const out = recategorized(
            scaleOf(start.data.feedback_config),
            parsed.data.add_categories,
            parsed.data.remove_categories,
          );
          const values = (out.categories ?? []).map((k) => k.value);
          expect(new Set(values).size).toBe(values.length);
          if (parsed.data.remove_categories) expect(values.length).toBeGreaterThanOrEqual(2);
        } catch (err) {
          expect(err).toBeInstanceOf(ValidationFailed);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
