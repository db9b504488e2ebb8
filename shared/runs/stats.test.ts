import { describe, expect, it } from "vitest";
import { percentile } from "../percentile.ts";
import { aggregateRunStats, type StatRun } from "./stats.ts";

const run = (over: Partial<StatRun>): StatRun => ({
  start_time: "2026-01-01T00:00:00.000000Z",
  end_time: "2026-01-01T00:00:01.000000Z",
  status: "success",
  first_token_time: null,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  prompt_cost: null,
  completion_cost: null,
  total_cost: null,
  feedback_stats: null,
  ...over,
});

describe("run stats", () => {
  it("nearest-rank percentiles", () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 99)).toBe(4);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
  });

  it("no runs: a count of zero and no figures", () => {
    expect(aggregateRunStats([])).toMatchObject({
      run_count: 0,
      latency_p50: null,
      error_rate: null,
      total_cost: null,
      total_tokens: 0,
      last_run_start_time: null,
      feedback_stats: null,
    });
  });

  it("latencies and first tokens in seconds, sums, rates, the newest start, feedback merged by weight", () => {
    const stats = aggregateRunStats([
      run({
        end_time: "2026-01-01T00:00:02.000000Z",
        first_token_time: "2026-01-01T00:00:00.500000Z",
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_cost: 0.001,
        completion_cost: 0.002,
        total_cost: 0.003,
        feedback_stats: { correct: { n: 2, avg: 1, values: {} } },
      }),
      run({
        start_time: "2026-01-02T00:00:00.000000Z",
        end_time: "2026-01-02T00:00:04.000000Z",
        status: "error",
        total_tokens: 30,
        prompt_tokens: 20,
        completion_tokens: 10,
        feedback_stats: {
          correct: { n: 1, avg: 0, values: {} },
          label: { n: 1, avg: null, values: { good: 1 } },
        },
      }),
      run({ end_time: null, status: "pending" }),
    ]);
    expect(stats).toEqual({
      run_count: 3,
      latency_p50: 2,
      latency_p99: 4,
      first_token_p50: 0.5,
      first_token_p99: 0.5,
      prompt_tokens: 30,
      completion_tokens: 15,
      total_tokens: 45,
      median_tokens: 15,
      prompt_cost: 0.001,
      completion_cost: 0.002,
      total_cost: 0.003,
      error_rate: 1 / 3,
      streaming_rate: 1 / 3,
      last_run_start_time: "2026-01-02T00:00:00.000000Z",
      feedback_stats: {
        correct: { n: 3, avg: 2 / 3, values: {} },
        label: { n: 1, avg: null, values: { good: 1 } },
      },
    });
  });
  it("feedback keys and values named like Object.prototype members are ordinary keys (no prototype pollution)", () => {
    const stats = JSON.parse(
      '{"__proto__":{"n":1,"avg":1,"values":{"constructor":1}},"toString":{"n":2,"avg":0,"values":{"__proto__":2}}}',
    );
    const out = aggregateRunStats([run({ feedback_stats: stats }), run({ feedback_stats: stats })]);
    expect(JSON.parse(JSON.stringify(out.feedback_stats))).toEqual(
      JSON.parse(
        '{"__proto__":{"n":2,"avg":1,"values":{"constructor":2}},"toString":{"n":4,"avg":0,"values":{"__proto__":4}}}',
      ),
    );
    expect(({} as Record<string, unknown>).n).toBeUndefined();
  });
});
