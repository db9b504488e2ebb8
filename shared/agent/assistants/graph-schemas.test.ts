import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { registry, withLangGraph } from "@langchain/langgraph/zod";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import type { CompiledGraphLike } from "../deployment/graphs.ts";
import { contains } from "./assistants.ts";
import { attachExtractedSchemas, graphSchemas, subgraphSchemas } from "./graph-schemas.ts";

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

const asLike = (g: unknown) => g as CompiledGraphLike;

// Runtime schemas (zod v3 and v4, LangGraph's registry metadata) and build-time ones (ts-schemas.ts) in one answer.
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
    expect(s.config_schema).toEqual(s.context_schema);
    // The converter's own draft is kept.
    expect(s.state_schema?.$schema).toEqual(expect.stringContaining("json-schema.org"));
  });

  it("a zod v3 state (zod/v3) gives typed schemas too", () => {
    const State = z3.object({ text: z3.string(), tags: z3.array(z3.string()).optional() });
    const g = new StateGraph(State)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .compile();
    const s = graphSchemas("g", asLike(g));
    expect(s.state_schema).toMatchObject({
      type: "object",
      properties: { text: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
      required: ["text"],
    });
    expect(s.input_schema?.required).toBeUndefined();
  });

  it("registry metadata (jsonSchemaExtra) and field descriptions end up in the schemas, zod v4", () => {
    const State = z.object({
      messages: z
        .array(z.string())
        .describe("the conversation")
        .register(registry, {
          reducer: { fn: (a: string[], b: string[]) => a.concat(b) },
          default: () => [],
          jsonSchemaExtra: { langgraph_type: "messages" },
        }),
      n: z.number().describe("a count"),
    });
    const s = graphSchemas(
      "g",
      asLike(
        new StateGraph(State)
          .addNode("a", () => ({}))
          .addEdge(START, "a")
          .compile(),
      ),
    );
    expect(s.state_schema).toMatchObject({
      properties: {
        messages: { type: "array", langgraph_type: "messages", description: "the conversation" },
        n: { type: "number", description: "a count" },
      },
    });
    expect(s.input_schema).toMatchObject({ properties: { messages: { langgraph_type: "messages" } } });
  });

  it("registry metadata through withLangGraph ends up in the schemas, zod v3", () => {
    const State = z3.object({
      messages: withLangGraph(z3.array(z3.string()), {
        reducer: { fn: (a: string[], b: string[]) => a.concat(b) },
        default: () => [],
        jsonSchemaExtra: { langgraph_type: "messages" },
      }),
    });
    const g = new StateGraph(State)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .compile();
    expect(graphSchemas("g", asLike(g)).state_schema).toMatchObject({
      properties: { messages: { type: "array", langgraph_type: "messages" } },
    });
  });

  it("config_schema is the zod context schema, or the build-time config schema of an Annotation graph", () => {
    const State = Annotation.Root({ text: Annotation<string>() });
    const g = new StateGraph(State)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .compile();
    expect(graphSchemas("g", asLike(g)).config_schema).toBeNull();
    const config = { type: "object", properties: { model: { type: "string" } } };
    const s = graphSchemas("g", asLike(g), { config });
    // As the reference answers them: with the draft they are written to.
    expect(s.config_schema).toEqual({ $schema: DRAFT_07, ...config });
    expect(s.context_schema).toEqual({ $schema: DRAFT_07, ...config });
  });

  it("an Annotation state gives its channel names, unconstrained", () => {
    const State = Annotation.Root({ text: Annotation<string>(), count: Annotation<number>() });
    const g = new StateGraph(State)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .compile();
    expect(graphSchemas("g", asLike(g)).state_schema).toEqual({
      $schema: DRAFT_07,
      type: "object",
      properties: { text: {}, count: {} },
    });
  });

  it("an Annotation state's build-time schemas, when attached, are served in place of the channel names", () => {
    const State = Annotation.Root({ text: Annotation<string>(), count: Annotation<number>() });
    const g = asLike(
      new StateGraph(State)
        .addNode("a", () => ({}))
        .addEdge(START, "a")
        .compile(),
    );
    const state = { type: "object", properties: { text: { type: "string" }, count: { type: "number" } } };
    attachExtractedSchemas(g, { state, input: state, output: { ...state, required: ["text", "count"] } });
    const s = graphSchemas("g", g);
    expect(s.state_schema).toEqual({ $schema: DRAFT_07, ...state });
    expect(s.input_schema).toEqual({ $schema: DRAFT_07, ...state });
    expect(s.output_schema).toMatchObject({ required: ["text", "count"] });
  });

  it("a zod state's runtime schema wins over a build-time one", () => {
    const g = asLike(
      new StateGraph(z.object({ text: z.string() }))
        .addNode("a", () => ({}))
        .addEdge(START, "a")
        .compile(),
    );
    const s = graphSchemas("g", g, { state: { type: "object", properties: { other: {} } } });
    expect(s.state_schema).toMatchObject({ properties: { text: { type: "string" } } });
  });
});

describe("subgraphSchemas", () => {
  it("a subgraph is served its build-time schemas by namespace", async () => {
    const Inner = Annotation.Root({ depth: Annotation<number>() });
    const inner = new StateGraph(Inner)
      .addNode("leaf", () => ({}))
      .addEdge(START, "leaf")
      .compile();
    const outer = asLike(new StateGraph(Inner).addNode("child", inner).addEdge(START, "child").compile());
    const depth = { type: "object", properties: { depth: { type: "number" } } };
    attachExtractedSchemas(outer, { state: depth, subgraphs: { child: { state: depth } } });
    const subs = await subgraphSchemas("g", outer);
    expect(Object.keys(subs)).toEqual(["child"]);
    // Keyed as the LangGraph.js server keys them.
    expect(Object.keys(subs.child).sort()).toEqual(["config", "input", "output", "state"]);
    expect(subs.child.state).toEqual({ $schema: DRAFT_07, ...depth });
    expect(subs.child.input).toEqual({ $schema: DRAFT_07, type: "object", properties: { depth: {} } });
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
