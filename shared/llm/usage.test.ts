import { describe, expect, it } from "vitest";
import { extractUsage, modelNameOf, providerOf } from "./usage.ts";

const u = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  total_tokens: input + output,
});
const lcAi = (usage: unknown) => ({
  lc: 1,
  type: "constructor",
  id: ["langchain_core", "messages", "AIMessage"],
  kwargs: { content: "x", usage_metadata: usage },
});

describe("extractUsage", () => {
  it("reads outputs.usage_metadata first", () => {
    const run = { outputs: { usage_metadata: u(1, 2), messages: [{ usage_metadata: u(9, 9) }] } };
    expect(extractUsage(run)).toEqual(u(1, 2));
  });

  it("reads the last platform output message's usage_metadata", () => {
    const run = {
      outputs: { messages: [{ usage_metadata: u(9, 9) }, { role: "assistant", usage_metadata: u(3, 4) }] },
    };
    expect(extractUsage(run)).toEqual(u(3, 4));
  });

  it("reads LangChain kwargs.usage_metadata on the last output message", () => {
    expect(extractUsage({ outputs: { messages: [lcAi(u(5, 6))] } })).toEqual(u(5, 6));
  });

  it("reads generations[...].message.kwargs.usage_metadata", () => {
    expect(extractUsage({ outputs: { generations: [[{ text: "x", message: lcAi(u(2, 2)) }]] } })).toEqual(
      u(2, 2),
    );
  });

  it("reads extra.metadata.usage_metadata", () => {
    expect(extractUsage({ outputs: {}, extra: { metadata: { usage_metadata: u(4, 1) } } })).toEqual(u(4, 1));
  });

  it("fills total as input + output when missing", () => {
    expect(extractUsage({ outputs: { usage_metadata: { input_tokens: 4, output_tokens: 6 } } })).toEqual(
      u(4, 6),
    );
  });

  it("ignores usage_metadata without usable numbers and falls through to vendor fields", () => {
    const run = {
      outputs: {
        usage_metadata: { input_tokens: "many" },
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      },
    };
    expect(extractUsage(run)).toEqual(u(1, 1));
  });

  it("converts OpenAI usage with cached, reasoning and audio details", () => {
    const usage = {
      prompt_tokens: 20,
      completion_tokens: 10,
      total_tokens: 30,
      prompt_tokens_details: { cached_tokens: 5, audio_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 4, audio_tokens: 1 },
    };
    expect(extractUsage({ outputs: { usage } })).toEqual({
      ...u(20, 10),
      input_token_details: { cache_read: 5, audio: 2 },
      output_token_details: { reasoning: 4, audio: 1 },
    });
  });

  it("converts Anthropic usage, adding cache reads and writes to input", () => {
    const usage = {
      input_tokens: 10,
      output_tokens: 3,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 50,
    };
    expect(extractUsage({ outputs: { usage } })).toEqual({
      ...u(160, 3),
      input_token_details: { cache_read: 100, cache_creation: 50 },
    });
  });

  it("reads outputs.llm_output.token_usage (snake and camel case)", () => {
    const snake = {
      llm_output: { token_usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } },
    };
    expect(extractUsage({ outputs: snake })).toEqual(u(2, 3));
    const camel = { llm_output: { tokenUsage: {}, token_usage: { promptTokens: 1, completionTokens: 1 } } };
    expect(extractUsage({ outputs: camel })).toEqual(u(1, 1));
  });

  it("returns null when no usage is reported", () => {
    expect(extractUsage({ outputs: { choices: [] } })).toBeNull();
    expect(extractUsage({})).toBeNull();
  });
});

describe("modelNameOf", () => {
  const full = {
    extra: { metadata: { ls_model_name: "a" }, invocation_params: { model: "e", model_name: "f" } },
    metadata: { ls_model_name: "b" },
    inputs: { model: "c", model_name: "d" },
  };

  it("prefers extra.metadata.ls_model_name, then metadata, inputs.model, inputs.model_name, invocation params", () => {
    expect(modelNameOf(full)).toBe("a");
    expect(modelNameOf({ ...full, extra: { invocation_params: full.extra.invocation_params } })).toBe("b");
    const noMeta = { inputs: full.inputs, extra: { invocation_params: full.extra.invocation_params } };
    expect(modelNameOf(noMeta)).toBe("c");
    expect(modelNameOf({ ...noMeta, inputs: { model_name: "d" } })).toBe("d");
    expect(modelNameOf({ extra: { invocation_params: { model: "e", model_name: "f" } } })).toBe("e");
    expect(modelNameOf({ extra: { invocation_params: { model_name: "f" } } })).toBe("f");
  });

  it("falls back to the model echoed in outputs, else null", () => {
    expect(modelNameOf({ outputs: { model: "gpt-4o-2024-08-06" } })).toBe("gpt-4o-2024-08-06");
    expect(modelNameOf({ inputs: { model: "" } })).toBeNull();
  });
});

describe("providerOf", () => {
  it("reads extra.metadata.ls_provider", () => {
    expect(providerOf({ extra: { metadata: { ls_provider: "openai" } } })).toBe("openai");
    expect(providerOf({})).toBeNull();
  });
});
