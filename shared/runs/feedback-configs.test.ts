import { describe, expect, it } from "vitest";
import { ValidationFailed } from "../errors.ts";
import {
  configProblem,
  FeedbackConfigCreate,
  recategorized,
  sameScale,
  scaleOf,
  scaleProblems,
} from "./feedback-configs.ts";

const cats = (...values: number[]) => values.map((value) => ({ value, label: `l${value}` }));

describe("feedback config scales", () => {
  it("a scale is stored with every field, absent ones as null (categories) or false", () => {
    expect(scaleOf({ type: "continuous", max: 1 })).toEqual({
      type: "continuous",
      min: null,
      max: 1,
      categories: null,
      allows_multiple_categories: false,
    });
  });

  it("two configs are the same scale when they differ only in absent versus null or default fields", () => {
    expect(
      sameScale(
        { type: "continuous", min: 0, max: 1 },
        { type: "continuous", min: 0, max: 1, categories: null },
      ),
    ).toBe(true);
    expect(sameScale({ type: "continuous", min: 0, max: 1 }, { type: "continuous", min: 0, max: 2 })).toBe(
      false,
    );
    expect(
      sameScale(
        { type: "categorical", categories: cats(0, 1) },
        { type: "categorical", categories: cats(1, 0) },
      ),
    ).toBe(false);
  });

  it("a stored scale needs min at most max, and distinct categories when categorical", () => {
    expect(scaleProblems({ type: "continuous", min: 2, max: 1 })[0].message).toMatch(/above max/);
    expect(scaleProblems({ type: "categorical" })[0].message).toMatch(/needs its categories/);
    expect(scaleProblems({ type: "categorical", categories: [...cats(1), { value: 1 }] })[0].path).toEqual([
      "categories",
      1,
      "value",
    ]);
    expect(scaleProblems({ type: "categorical", categories: cats(0, 1) })).toEqual([]);
    expect(
      FeedbackConfigCreate.safeParse({ feedback_key: "k", feedback_config: { type: "categorical" } }).success,
    ).toBe(false);
  });

  it("a score is checked against the scale: the range when continuous, the categories when categorical", () => {
    expect(configProblem({ type: "continuous", min: 0, max: 1 }, 2)).toMatch(/above the config's max 1/);
    expect(configProblem({ type: "continuous", min: 0, max: 1 }, -1)).toMatch(/below/);
    expect(configProblem({ type: "continuous", min: 0, max: 1 }, true)).toBeUndefined();
    expect(configProblem({ type: "categorical", categories: cats(0, 1) }, 3)).toMatch(/none of/);
    expect(configProblem({ type: "freeform" }, 100)).toBeUndefined();
    expect(configProblem(null, 100)).toBeUndefined();
  });

  it("categories are added when new and removed while two remain; other scales have none to change", () => {
    const scale = scaleOf({ type: "categorical", categories: cats(1, 2) });
    expect(recategorized(scale, cats(3), undefined).categories?.map((c) => c.value)).toEqual([1, 2, 3]);
    expect(recategorized(scale, cats(3), [1]).categories?.map((c) => c.value)).toEqual([2, 3]);
    expect(() => recategorized(scale, cats(2), undefined)).toThrow(ValidationFailed);
    expect(() => recategorized(scale, [{ value: 9, label: "l1" }], undefined)).toThrow(/clashes/);
    expect(() => recategorized(scale, undefined, [1])).toThrow(/two categories/);
    expect(() => recategorized(scaleOf({ type: "freeform" }), cats(1), undefined)).toThrow(/not categorical/);
    expect(recategorized(scale, undefined, undefined)).toBe(scale);
  });
});
