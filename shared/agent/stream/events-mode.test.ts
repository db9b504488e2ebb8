import { dispatchCustomEvent } from "@langchain/core/callbacks/dispatch";
import { StringOutputParser } from "@langchain/core/output_parsers";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { attachEventsMode, type StreamEventV2 } from "./events-mode.ts";
import { toJson } from "./serialize.ts";

// stream_mode "events" on a real graph: what the worker's `events` frames carry, checked against the rules and
// against @langchain/core's own streamEvents v2 filtered as the reference server forwards it.
const RUN_ID = "11111111-1111-4111-8111-111111111111";
const input = { messages: [{ role: "user", content: "hi" }] };

const lookup = tool(async ({ city }) => `sunny in ${city}`, {
  name: "weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

/** reply: a chat model called with invoke; tools: a custom event, a tool call and a streamed chain. */
function chatGraph(withTools = false) {
  const g = new StateGraph(MessagesAnnotation).addNode("reply", async (s) => ({
    messages: [await new FakeListChatModel({ responses: ["hey"] }).invoke(s.messages)],
  }));
  if (!withTools) return g.addEdge(START, "reply").addEdge("reply", END).compile();
  return g
    .addNode("tools", async () => {
      await dispatchCustomEvent("progress", { step: 1 });
      const weather = await lookup.invoke({ city: "Paris" });
      let text = "";
      const chain = new FakeListChatModel({ responses: ["ok"] }).pipe(new StringOutputParser());
      for await (const piece of await chain.stream("summarise")) text += piece;
      return { messages: [{ role: "ai", content: `${weather} ${text}` }] };
    })
    .addEdge(START, "reply")
    .addEdge("reply", "tools")
    .addEdge("tools", END)
    .compile();
}

async function eventsOf(graph: ReturnType<typeof chatGraph>, config: Record<string, any> = {}) {
  const events: StreamEventV2[] = [];
  const cfg: Record<string, any> = { streamMode: ["values"], metadata: { run_id: RUN_ID }, ...config };
  attachEventsMode(cfg, { runId: RUN_ID, input, emit: (e) => events.push(e) });
  for await (const _ of await graph.stream(input, cfg));
  return events;
}

const summary = (events: StreamEventV2[]) => events.map((e) => `${e.event} ${e.name}`);

describe("stream_mode events", () => {
  it("the graph run opens the stream: on_chain_start named after the graph, the agent run's id, the input as sent", async () => {
    const [first] = await eventsOf(chatGraph());
    expect(first).toEqual({
      event: "on_chain_start",
      name: "LangGraph",
      run_id: RUN_ID,
      tags: [],
      metadata: expect.objectContaining({ run_id: RUN_ID }),
      data: { input },
      parent_ids: [],
    });
  });

  it("the graph run closes the stream: on_chain_end with the final state as output and no input", async () => {
    const last = (await eventsOf(chatGraph())).at(-1)!;
    expect(last).toMatchObject({ event: "on_chain_end", name: "LangGraph", run_id: RUN_ID, parent_ids: [] });
    expect(last.data).toEqual({
      output: {
        messages: [
          expect.objectContaining({ type: "human", content: "hi" }),
          expect.objectContaining({ type: "ai", content: "hey" }),
        ],
      },
    });
  });

  it("a node is a chain run under the graph, tagged with its step, its input the state", async () => {
    const events = await eventsOf(chatGraph());
    const start = events.find((e) => e.event === "on_chain_start" && e.name === "reply")!;
    const end = events.find((e) => e.event === "on_chain_end" && e.name === "reply")!;
    expect(start).toMatchObject({
      tags: ["graph:step:1"],
      metadata: { langgraph_node: "reply", langgraph_step: 1, run_id: RUN_ID },
      data: { input: { messages: [expect.objectContaining({ type: "human", content: "hi" })] } },
      parent_ids: [RUN_ID],
    });
    expect(end.run_id).toBe(start.run_id);
    expect(end.data.output).toEqual({ messages: [expect.objectContaining({ type: "ai", content: "hey" })] });
  });

  it("a chat model called with invoke streams its tokens as on_chat_model_stream chunks", async () => {
    const events = await eventsOf(chatGraph());
    const node = events.find((e) => e.name === "reply")!;
    const model = events.filter((e) => e.name === "FakeListChatModel");
    expect(model.map((e) => e.event)).toEqual([
      "on_chat_model_start",
      "on_chat_model_stream",
      "on_chat_model_stream",
      "on_chat_model_stream",
      "on_chat_model_end",
    ]);
    const [start, ...rest] = model;
    expect(start.data.input).toEqual({
      messages: [[expect.objectContaining({ type: "human", content: "hi" })]],
    });
    const chunks = rest.slice(0, -1).map((e) => e.data.chunk as Record<string, unknown>);
    expect(chunks.map((c) => c.content).join("")).toBe("hey");
    for (const c of chunks)
      expect(c).toMatchObject({ type: "ai", id: `run-${start.run_id}`, tool_call_chunks: [] });
    expect(rest.at(-1)!.data.output).toMatchObject({ type: "ai", content: "hey" });
    for (const e of model)
      expect(e).toMatchObject({ run_id: start.run_id, parent_ids: [RUN_ID, node.run_id] });
    expect(start.metadata).toMatchObject({ langgraph_node: "reply", ls_model_type: "chat" });
  });

  it("the events come in callback order: graph, node, model start, tokens, model end, node end, graph end", async () => {
    expect(summary(await eventsOf(chatGraph()))).toEqual([
      "on_chain_start LangGraph",
      "on_chain_start reply",
      "on_chat_model_start FakeListChatModel",
      "on_chat_model_stream FakeListChatModel",
      "on_chat_model_stream FakeListChatModel",
      "on_chat_model_stream FakeListChatModel",
      "on_chat_model_end FakeListChatModel",
      "on_chain_end reply",
      "on_chain_end LangGraph",
    ]);
  });

  it("hidden runs (the graph's __start__ step) are not reported", async () => {
    const events = await eventsOf(chatGraph(true));
    expect(events.some((e) => e.tags.includes("langsmith:hidden") || e.name === "__start__")).toBe(false);
  });

  it("tools, custom events and streamed runnables make their own events", async () => {
    const events = await eventsOf(chatGraph(true));
    const tools = events.find((e) => e.event === "on_chain_start" && e.name === "tools")!;
    expect(events.find((e) => e.event === "on_custom_event")).toMatchObject({
      name: "progress",
      run_id: tools.run_id,
      data: { step: 1 },
      parent_ids: [RUN_ID],
    });
    expect(events.find((e) => e.event === "on_tool_start")).toMatchObject({
      name: "weather",
      data: { input: { city: "Paris" } },
      parent_ids: [RUN_ID, tools.run_id],
    });
    expect(events.find((e) => e.event === "on_tool_end")).toMatchObject({
      name: "weather",
      data: { output: "sunny in Paris", input: { city: "Paris" } },
    });
    // A streamed chain's parser transforms the model's stream: its chunks are on_parser_stream events.
    const parser = events.filter((e) => e.name === "StrOutputParser");
    expect(parser[0].event).toBe("on_parser_start");
    expect(parser.at(-1)).toMatchObject({ event: "on_parser_end", data: { output: "ok" } });
    const streamed = parser.filter((e) => e.event === "on_parser_stream");
    expect(streamed.map((e) => e.data.chunk).join("")).toBe("ok");
  });

  it("the graph's own stream-mode output is not an event (it goes out as the other modes' frames)", async () => {
    const events = await eventsOf(chatGraph(true));
    expect(events.filter((e) => e.event === "on_chain_stream" && e.run_id === RUN_ID)).toEqual([]);
  });

  it("every event is JSON data", async () => {
    for (const e of await eventsOf(chatGraph(true))) expect(JSON.parse(JSON.stringify(e))).toEqual(e);
  });

  it("a subgraph's runs list every ancestor in parent_ids, root first", async () => {
    const outer = new StateGraph(MessagesAnnotation)
      .addNode("inner", chatGraph())
      .addEdge(START, "inner")
      .addEdge("inner", END)
      .compile();
    const events = await eventsOf(outer as unknown as ReturnType<typeof chatGraph>);
    const starts = events.filter((e) => e.event === "on_chain_start");
    const id = (name: string) => starts.find((e) => e.name === name && e.run_id !== RUN_ID)!.run_id;
    const model = events.find((e) => e.event === "on_chat_model_start")!;
    // graph → node "inner" → the subgraph's own graph run → its node "reply" → the model.
    expect(model.parent_ids).toEqual([RUN_ID, id("inner"), id("LangGraph"), id("reply")]);
  });

  it("the wiring adds the handler beside the config's callbacks and keeps a root run id already set", async () => {
    const seen: string[] = [];
    const other = { handleChainStart: async () => void seen.push("other") };
    const config: Record<string, any> = { streamMode: ["values"], callbacks: [other], runId: RUN_ID };
    const events: StreamEventV2[] = [];
    attachEventsMode(config, {
      runId: "22222222-2222-4222-8222-222222222222",
      input: null,
      emit: (e) => events.push(e),
    });
    expect(config.callbacks).toHaveLength(2);
    expect(config.runId).toBe(RUN_ID);
    for await (const _ of await chatGraph().stream(input, config));
    expect(seen.length).toBeGreaterThan(0);
    // A resumed run has no input: the reference sends `input: null` in the first event too.
    expect(events[0]).toMatchObject({ event: "on_chain_start", run_id: RUN_ID, data: { input: null } });
  });

  it("matches @langchain/core's streamEvents v2 as the reference server forwards it (plus parent_ids)", async () => {
    const graph = chatGraph(true);
    const ours = (await eventsOf(graph)).map(({ parent_ids: _, ...e }) => e);
    const reference: unknown[] = [];
    const config = { version: "v2" as const, streamMode: ["values" as const], metadata: { run_id: RUN_ID } };
    for await (const e of graph.streamEvents(input, { ...config, runId: RUN_ID })) {
      if (e.tags?.includes("langsmith:hidden") || (e.event === "on_chain_stream" && e.run_id === RUN_ID))
        continue;
      reference.push(toJson(e));
    }
    expect(normalised(ours)).toEqual(normalised(reference));
  });
});

/** Keys sorted (key order is no part of the wire format), then ids replaced by their order of first appearance. */
function normalised(events: unknown[]): unknown {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, sorted(x)]),
          )
        : v;
  const seen = new Map<string, string>();
  const alias = (id: string) => {
    if (!seen.has(id)) seen.set(id, `id${seen.size}`);
    return seen.get(id)!;
  };
  const text = JSON.stringify(sorted(events)).replace(
    /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
    alias,
  );
  return JSON.parse(text);
}
