import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { contains } from "./assistants.ts";
import { graphSchemas } from "./graph-schemas.ts";
import type { CompiledGraphLike } from "./graphs.ts";

const asLike = (g: unknown) => g as CompiledGraphLike;

describe("graphSchemas", () => {
  it("a zod state, input and context give typed schemas; input has no required fields", () => {
    const State = z.object({ text: z.string(), n: z.number().optional() });
    const Context = z.object({ model: z.string() });
    const g = new StateGraph(State, Context)
      .addNode("a", (s) => ({ text: `${s.text}!` }))
      .addEdge(START, "a")
      .addEdge("a", END)
      .compile();
    const s = graphSchemas("g", asLike(g));
    expect(s.state_schema).toMatchObject({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
    expect(s.input_schema).toMatchObject({ properties: { text: { type: "string" } } });
    expect(s.input_schema?.required).toBeUndefined();
    expect(s.context_schema).toMatchObject({ properties: { model: { type: "string" } } });
    expect(s.config_schema).toBeNull();
  });

  it("an Annotation state gives its channel names, unconstrained", () => {
    const State = Annotation.Root({ text: Annotation<string>(), count: Annotation<number>() });
    const g = new StateGraph(State)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .compile();
    expect(graphSchemas("g", asLike(g)).state_schema).toEqual({
      type: "object",
      properties: { text: {}, count: {} },
    });
  });
});

describe("contains (metadata filter)", () => {
  it("is JSON containment", () => {
    expect(contains({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } })).toBe(true);
    expect(contains({ a: 1 }, { a: 2 })).toBe(false);
    expect(contains({ a: [1, 2, 3] }, { a: [2] })).toBe(true);
    expect(contains({ a: null }, { a: null })).toBe(true);
    expect(contains({}, { a: undefined })).toBe(true);
    expect(contains({ a: "1" }, { a: 1 })).toBe(false);
  });
});
