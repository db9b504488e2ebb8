import { describe, expect, it } from "vitest";
import type { Message } from "./format.ts";
import { encodingFor, estimateTokens } from "./tokens.ts";

describe("estimateTokens", () => {
  it("picks o200k_base for gpt-4o/4.1/5 and o-series, cl100k_base otherwise", () => {
    for (const m of ["gpt-4o", "gpt-4o-mini", "openai/gpt-4.1-nano", "gpt-5", "o1", "o3-mini", "o4-mini"]) {
      expect(encodingFor(m)).toBe("o200k_base");
    }
    for (const m of ["gpt-4", "gpt-3.5-turbo", "claude-sonnet-4", "gemini-2.5-pro", undefined, "foo1"]) {
      expect(encodingFor(m)).toBe("cl100k_base");
    }
  });

  it("counts plain text without overhead", () => {
    expect(estimateTokens("hello world", "gpt-4o")).toBe(2);
    expect(estimateTokens("")).toBe(0);
    // Special-token text counts as text instead of throwing.
    expect(estimateTokens("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("adds 3 tokens per message and 3 per reply, counting text and reasoning blocks", () => {
    const messages: Message[] = [
      { role: "system", content: [{ type: "text", text: "hello world" }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "hello world" },
          { type: "image", url: "u" },
        ],
      },
    ];
    expect(estimateTokens(messages, "gpt-4o")).toBe(3 + (3 + 2) + (3 + 2));
    expect(estimateTokens([], "gpt-4o")).toBe(0);
  });

  it("counts tool call names and arguments", () => {
    const withCall: Message[] = [
      { role: "assistant", content: [{ type: "tool_call", name: "f", args: { a: 1 } }] },
    ];
    expect(estimateTokens(withCall)).toBeGreaterThan(6);
  });
});
