import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICE_MAP } from "./default-prices.ts";
import { normalizeLlmIO } from "./normalize.ts";
import { summarizeLlmRun } from "./summary.ts";

// Arbitrary JSON plus values shaped like real payloads, so the fuzzer reaches the deeper converters.
const shaped = fc.oneof(
  fc.jsonValue(),
  fc.record({ messages: fc.array(fc.jsonValue(), { maxLength: 4 }) }),
  fc.record({
    messages: fc.array(
      fc.record({
        role: fc.constantFrom("user", "assistant", "tool", "developer", "human", "x"),
        content: fc.oneof(fc.string(), fc.array(fc.jsonValue(), { maxLength: 3 })),
        tool_calls: fc.array(fc.jsonValue(), { maxLength: 2 }),
        tool_call_id: fc.jsonValue(),
      }),
      { maxLength: 4 },
    ),
  }),
  fc.record({
    choices: fc.array(fc.record({ message: fc.jsonValue() }), { maxLength: 2 }),
    usage: fc.jsonValue(),
  }),
  fc.record({ generations: fc.array(fc.array(fc.jsonValue(), { maxLength: 2 }), { maxLength: 2 }) }),
);

describe("normalize fuzz", () => {
  it("normalizeLlmIO never throws on arbitrary JSON", () => {
    fc.assert(
      fc.property(shaped, shaped, (inputs, outputs) => {
        const out = normalizeLlmIO(inputs, outputs);
        expect(Array.isArray(out.input_messages) && Array.isArray(out.format_errors)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("summarizeLlmRun never throws on arbitrary JSON", () => {
    fc.assert(
      fc.property(shaped, shaped, fc.jsonValue(), fc.jsonValue(), (inputs, outputs, extra, start) => {
        const s = summarizeLlmRun({ inputs, outputs, extra, start_time: start }, DEFAULT_PRICE_MAP);
        expect(Number.isFinite(s.total_tokens)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
