import { describe, expect, it } from "vitest";
import { providerSpec } from "./store-index.ts";

describe("store.index.embed", () => {
  it("a provider string names the provider and the model", () => {
    expect(providerSpec("openai:text-embedding-3-small")).toEqual({
      provider: "openai",
      model: "text-embedding-3-small",
    });
    expect(providerSpec("bedrock:amazon.titan-embed-text-v2:0")).toEqual({
      provider: "bedrock",
      model: "amazon.titan-embed-text-v2:0",
    });
  });
  it("a module path is not a provider string", () => {
    for (const spec of ["./src/embeddings.ts:embeddings", "src/e.ts:e", "embeddings.mjs:e", "/abs/e.ts:e"])
      expect(providerSpec(spec), spec).toBeUndefined();
  });
});
