import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FeedbackCreate, FeedbackUpdate } from "./feedback.ts";
import { feedbackStats } from "./feedback-stats.ts";

describe("feedbackStats", () => {
  it("counts per key, averages the scores given (booleans as 1/0) and counts categorical values", () => {
    expect(
      feedbackStats([
        { key: "correct", score: 1 },
        { key: "correct", score: 0, value: "wrong" },
        { key: "correct", score: true, value: "right" },
        { key: "note", value: "fyi" },
        { key: "note", value: { nested: true } },
        { key: "note", score: null, value: 3 },
      ]),
    ).toEqual({
      correct: { n: 3, avg: 0.666667, values: { wrong: 1, right: 1 } },
      note: { n: 3, avg: null, values: { fyi: 1, "3": 1 } },
    });
  });

  it("is null without feedback; keys and values that name Object's own properties stay plain entries", () => {
    expect(feedbackStats([])).toBeNull();
    const stats = feedbackStats([
      { key: "__proto__", score: 1, value: "__proto__" },
      { key: "constructor", value: "toString" },
    ])!;
    expect(Object.keys(stats)).toEqual(["__proto__", "constructor"]);
    expect(Object.getOwnPropertyDescriptor(stats, "__proto__")?.value).toEqual({
      n: 1,
      avg: 1,
      values: { ["__proto__"]: 1 },
    });
    expect(Object.getPrototypeOf(stats)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(stats))).toEqual(stats);
  });

  it("fuzz: any feedback list gives n summing to the list's length and averages within the scores' range", () => {
    const item = fc.record({
      key: fc.string({ minLength: 1, maxLength: 8 }),
      score: fc.option(fc.oneof(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), fc.boolean()), {
        nil: null,
      }),
      value: fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.object()),
    });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 40 }), (list) => {
        const stats = feedbackStats(list);
        if (!list.length) return stats === null;
        const total = Object.values(stats!).reduce((a, s) => a + s.n, 0);
        expect(total).toBe(list.length);
        for (const [key, s] of Object.entries(stats!)) {
          const scores = list.filter((f) => f.key === key && f.score !== null).map((f) => Number(f.score));
          if (!scores.length) expect(s.avg).toBeNull();
          else {
            expect(s.avg!).toBeGreaterThanOrEqual(Math.min(...scores) - 1e-6);
            expect(s.avg!).toBeLessThanOrEqual(Math.max(...scores) + 1e-6);
          }
        }
        JSON.stringify(stats);
        return true;
      }),
    );
  });
});

describe("the feedback bodies (untrusted input)", () => {
  const runId = "0193a5b0-0000-7000-8000-000000000001";

  it("takes what the SDK sends and refuses what is not done here", () => {
    const sdk = FeedbackCreate.safeParse({
      id: "0193a5b0-0000-7000-8000-000000000002",
      run_id: runId,
      trace_id: runId,
      key: "correctness",
      score: 0.5,
      value: "ok",
      feedback_source: { type: "api", metadata: {} },
      session_id: runId,
      start_time: "2026-11-24T10:00:00.000Z",
      extend_trace_retention: true,
    });
    expect(sdk.success).toBe(true);
    expect(FeedbackCreate.safeParse({ key: "k" }).error?.issues[0].message).toMatch(/run_id/);
    const comparative = FeedbackCreate.safeParse({
      run_id: runId,
      key: "k",
      comparative_experiment_id: runId,
    });
    expect(comparative.error?.issues[0].message).toMatch(/comparative experiments/);
    expect(FeedbackCreate.safeParse({ run_id: runId, key: "k", start_time: "yesterday" }).success).toBe(
      false,
    );
    expect(FeedbackCreate.safeParse({ run_id: runId, key: "k", value: "x".repeat(70_000) }).success).toBe(
      false,
    );
  });

  it("fuzz: arbitrary JSON never throws out of the parsers", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const body =
          typeof a === "object" && a !== null && !Array.isArray(a) ? { ...a, run_id: runId, key: "k" } : a;
        FeedbackCreate.safeParse(body);
        FeedbackCreate.safeParse({ run_id: runId, key: "k", value: a, correction: b, feedback_config: b });
        FeedbackUpdate.safeParse(a);
        return true;
      }),
      { numRuns: 300 },
    );
  });
});
