import { describe, expect, it } from "vitest";
import { DEFAULT_PRICE_MAP } from "./default-prices.ts";
import type { PriceEntry } from "./prices.ts";
import { firstTokenTime, summarizeLlmRun } from "./summary.ts";

const price: PriceEntry = {
  id: "p",
  name: "test",
  match_pattern: "^test-model$",
  prompt_cost: 2e-6,
  completion_cost: 3e-6,
  prompt_cost_details: { cache_read: 1e-6 },
};

describe("summarizeLlmRun", () => {
  it("uses reported usage and prices it", () => {
    const run = {
      inputs: { model: "test-model", messages: [{ role: "user", content: "hi" }] },
      outputs: {
        choices: [{ message: { role: "assistant", content: "hello" } }],
        usage: { prompt_tokens: 20, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 5 } },
      },
    };
    const s = summarizeLlmRun(run, [price]);
    expect(s).toMatchObject({
      prompt_tokens: 20,
      completion_tokens: 10,
      total_tokens: 30,
      prompt_token_details: { cache_read: 5 },
      tokens_estimated: false,
      format_errors: [],
    });
    expect(s.total_cost).toBeCloseTo(5e-6 + 30e-6 + 30e-6, 12);
    expect(s.output_messages).toHaveLength(1);
  });

  it("estimates tokens from normalized messages when the run reports no usage", () => {
    const run = {
      inputs: { messages: [{ role: "user", content: "hello world" }] },
      outputs: { role: "assistant", content: "hello world" },
      extra: { metadata: { ls_model_name: "gpt-4o" } },
    };
    const s = summarizeLlmRun(run, DEFAULT_PRICE_MAP);
    expect(s).toMatchObject({
      prompt_tokens: 8,
      completion_tokens: 8,
      total_tokens: 16,
      tokens_estimated: true,
    });
    expect(s.total_cost).toBeCloseTo(8 * 2.5e-6 + 8 * 10e-6, 12);
  });

  it("leaves costs null when no price matches and none are explicit", () => {
    const s = summarizeLlmRun(
      { inputs: { model: "unknown" }, outputs: { usage_metadata: { input_tokens: 1 } } },
      [],
    );
    expect(s).toMatchObject({
      prompt_cost: null,
      completion_cost: null,
      total_cost: null,
      prompt_cost_details: null,
    });
  });

  it("explicit usage costs win even without a price", () => {
    const usage = { input_tokens: 1, output_tokens: 1, total_cost: 0.5 };
    expect(summarizeLlmRun({ outputs: { usage_metadata: usage } }, []).total_cost).toBe(0.5);
  });
});

describe("firstTokenTime", () => {
  it("returns the time of the first new_token event", () => {
    const events = [
      { name: "start", time: "2024-01-01T00:00:00Z" },
      { name: "new_token", time: "2024-01-01T00:00:01.250000", kwargs: { token: "a" } },
      { name: "new_token", time: "2024-01-01T00:00:00.500000" },
    ];
    expect(firstTokenTime(events)).toBe("2024-01-01T00:00:01.250000");
  });

  it("normalises epoch milliseconds to ISO", () => {
    expect(firstTokenTime([{ name: "new_token", time: Date.UTC(2024, 0, 1, 0, 0, 2) }])).toBe(
      "2024-01-01T00:00:02.000Z",
    );
  });

  it("returns null without new_token events", () => {
    expect(firstTokenTime([{ name: "start", time: "x" }])).toBeNull();
    expect(firstTokenTime(undefined)).toBeNull();
  });
});
