import { describe, expect, it } from "vitest";
import { DEFAULT_PRICE_MAP } from "./default-prices.ts";
import { computeCosts, findPrice, type PriceEntry } from "./prices.ts";

const entry = (over: Partial<PriceEntry> & { id: string }): PriceEntry => ({
  name: over.id,
  match_pattern: "^gpt-4o$",
  prompt_cost: 1e-6,
  completion_cost: 2e-6,
  ...over,
});

describe("findPrice", () => {
  it("matches the regex against the model name", () => {
    const entries = [entry({ id: "a" }), entry({ id: "b", match_pattern: "^claude" })];
    expect(findPrice(entries, "claude-3-opus", null, null)?.id).toBe("b");
    expect(findPrice(entries, "gemini", null, null)).toBeNull();
    expect(findPrice(entries, null, null, null)).toBeNull();
  });

  it("start_time activates an entry only for runs starting at or after it; the latest active wins", () => {
    const entries = [
      entry({ id: "old", start_time: null }),
      entry({ id: "2024", start_time: "2024-01-01T00:00:00Z" }),
      entry({ id: "2025", start_time: "2025-01-01T00:00:00Z" }),
    ];
    expect(findPrice(entries, "gpt-4o", null, "2023-06-01T00:00:00Z")?.id).toBe("old");
    expect(findPrice(entries, "gpt-4o", null, "2024-01-01T00:00:00Z")?.id).toBe("2024");
    expect(findPrice(entries, "gpt-4o", null, "2024-07-01T00:00:00.123456")?.id).toBe("2024");
    expect(findPrice(entries, "gpt-4o", null, Date.parse("2025-03-01T00:00:00Z"))?.id).toBe("2025");
  });

  it("provider, when set on an entry, must equal the run's ls_provider", () => {
    const entries = [entry({ id: "azure", provider: "azure" })];
    expect(findPrice(entries, "gpt-4o", "openai", null)).toBeNull();
    expect(findPrice(entries, "gpt-4o", null, null)).toBeNull();
    expect(findPrice(entries, "gpt-4o", "azure", null)?.id).toBe("azure");
  });

  it("ties on start_time go to provider-specific entries, then to the longer pattern", () => {
    const generic = entry({ id: "generic", match_pattern: "gpt" });
    const longer = entry({ id: "longer", match_pattern: "^gpt-4o" });
    const scoped = entry({ id: "scoped", match_pattern: "gpt", provider: "openai" });
    expect(findPrice([generic, longer], "gpt-4o", "openai", null)?.id).toBe("longer");
    expect(findPrice([generic, longer, scoped], "gpt-4o", "openai", null)?.id).toBe("scoped");
    const newer = entry({ id: "newer", match_pattern: "gpt", start_time: "2024-01-01T00:00:00Z" });
    expect(findPrice([scoped, newer], "gpt-4o", "openai", "2024-02-01T00:00:00Z")?.id).toBe("newer");
  });

  it("invalid regexes never throw and match nothing", () => {
    const entries = [entry({ id: "bad", match_pattern: "([" }), entry({ id: "ok", match_pattern: "gpt" })];
    expect(findPrice(entries, "gpt-4o", null, null)?.id).toBe("ok");
  });
});

describe("computeCosts", () => {
  const price = entry({
    id: "p",
    prompt_cost: 2e-6,
    completion_cost: 3e-6,
    prompt_cost_details: { cache_read: 1e-6 },
  });

  it("charges detail token types at their price and the remainder at the base price (greedy)", () => {
    const usage = { input_tokens: 20, output_tokens: 10, input_token_details: { cache_read: 5 } };
    const costs = computeCosts(usage, price)!;
    expect(costs.prompt_cost).toBeCloseTo(5 * 1e-6 + 15 * 2e-6, 12);
    expect(costs.completion_cost).toBeCloseTo(10 * 3e-6, 12);
    expect(costs.total_cost).toBeCloseTo(5 * 1e-6 + 15 * 2e-6 + 10 * 3e-6, 12);
    expect(costs.prompt_cost_details!.cache_read).toBeCloseTo(5e-6, 12);
    expect(costs.completion_cost_details).toEqual({});
  });

  it("detail tokens beyond the side's total are never billed twice", () => {
    const costs = computeCosts(
      { input_tokens: 3, output_tokens: 0, input_token_details: { cache_read: 5 } },
      price,
    )!;
    expect(costs.prompt_cost).toBeCloseTo(3 * 1e-6, 12);
  });

  it("explicit costs in usage win over computed ones", () => {
    const usage = { input_tokens: 20, output_tokens: 10, input_cost: 0.5, output_cost: 0.25, total_cost: 1 };
    expect(computeCosts(usage, price)).toMatchObject({
      prompt_cost: 0.5,
      completion_cost: 0.25,
      total_cost: 1,
    });
    const partial = computeCosts({ input_tokens: 20, output_tokens: 10, output_cost: 0.25 }, price)!;
    expect(partial.prompt_cost).toBeCloseTo(40e-6, 12);
    expect(partial.total_cost).toBeCloseTo(0.25 + 40e-6, 12);
    expect(computeCosts({ input_cost: 0.1 }, null)).toMatchObject({ prompt_cost: 0.1, total_cost: 0.1 });
  });

  it("returns null without a price or explicit costs", () => {
    expect(computeCosts({ input_tokens: 1, output_tokens: 1 }, null)).toBeNull();
  });
});

describe("DEFAULT_PRICE_MAP", () => {
  it("prices common models, each by its own entry", () => {
    const cases: [string, string][] = [
      ["gpt-4o", "gpt-4o"],
      ["gpt-4o-2024-08-06", "gpt-4o"],
      ["gpt-4o-mini", "gpt-4o-mini"],
      ["openai/gpt-4.1-mini", "gpt-4.1-mini"],
      ["o3-mini", "o3-mini"],
      ["gpt-5-nano", "gpt-5-nano"],
      ["claude-3-5-sonnet-20241022", "claude-3-5-sonnet"],
      ["us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"],
      ["claude-opus-4-5", "claude-opus-4-5"],
      ["claude-opus-4-1-20250805", "claude-opus-4"],
      ["claude-haiku-4-5", "claude-haiku-4-5"],
      ["gemini-2.5-flash", "gemini-2.5-flash"],
      ["models/gemini-2.5-flash-lite", "gemini-2.5-flash-lite"],
      ["gemini-1.5-pro-002", "gemini-1.5-pro"],
    ];
    for (const [model, name] of cases)
      expect(findPrice(DEFAULT_PRICE_MAP, model, null, null)?.name, model).toBe(name);
    expect(findPrice(DEFAULT_PRICE_MAP, "my-local-llama", null, null)).toBeNull();
  });

  it("has unique ids, valid patterns and per-token prices", () => {
    expect(new Set(DEFAULT_PRICE_MAP.map((e) => e.id)).size).toBe(DEFAULT_PRICE_MAP.length);
    for (const e of DEFAULT_PRICE_MAP) {
      expect(() => new RegExp(e.match_pattern)).not.toThrow();
      expect(e.prompt_cost).toBeLessThan(1e-4);
      expect(e.start_time).toBeNull();
    }
  });
});
