import type { Client as AgentClient } from "@langchain/langgraph-sdk";
import { Client, type Run } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 6: every agent run is traced to its deployment's tracing project through the platform's own
// ingestion. Runs go through the real @langchain/langgraph-sdk Client; the trace is read back with the real
// langsmith Client. The graph's chat model reports usage and streams when asked to (stream mode messages).
const GRAPH = `
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
const USAGE = { input_tokens: 12, output_tokens: 4, total_tokens: 16 };
class ScriptedChat extends BaseChatModel {
  _llmType() { return "scripted"; }
  getLsParams() { return { ls_provider: "openai", ls_model_name: "gpt-4o-mini", ls_model_type: "chat" }; }
  reply(messages) { return "echo: " + messages.at(-1).content; }
  async _generate(messages) {
    const text = this.reply(messages);
    return { generations: [{ text, message: new AIMessage({ content: text, usage_metadata: USAGE }) }] };
  }
  async *_streamResponseChunks(messages, _options, runManager) {
    for (const piece of this.reply(messages).match(/.{1,3}/g)) {
      await new Promise((r) => setTimeout(r, 5));
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
    yield new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ content: "", usage_metadata: USAGE }) });
  }
}
export const chat = new StateGraph(MessagesAnnotation)
  .addNode("prepare", () => ({ messages: [] }))
  .addNode("reply", async (s) => ({ messages: [await new ScriptedChat({}).invoke(s.messages)] }))
  .addEdge(START, "prepare").addEdge("prepare", "reply").addEdge("reply", END).compile();
`;
const FILES = {
  "langgraph.json": JSON.stringify({ graphs: { chat: "./src/graph.mjs:chat" }, env: {} }),
  "src/graph.mjs": GRAPH,
};

let agents: AgentClient;
let projectId: string;
const traces = new Client({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key });
const repo = gitRepo(FILES);
afterAll(() => repo.remove());

beforeAll(async () => {
  const { deploymentId, client } = await deployedClient(facts, repo.dir, "tracing");
  agents = client;
  projectId = (await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).json
    .tracing_project_id;
  expect(projectId).toEqual(expect.any(String));
});

async function list(props: Parameters<Client["listRuns"]>[0]): Promise<Run[]> {
  const out: Run[] = [];
  for await (const run of traces.listRuns(props)) out.push(run);
  return out;
}

/**
 * The agent run's trace once all of it is ingested: the root ended, the llm run with it, and the root listed
 * among the project's roots (the project's run times are widened just after its runs are stored).
 */
const traceOf = (runId: string) =>
  waitFor(
    "the agent run's trace",
    async () => {
      const runs = await list({ projectId, traceId: runId });
      const root = runs.find((r) => r.id === runId);
      const llm = runs.find((r) => r.run_type === "llm");
      if (!root?.end_time || !llm?.end_time) return undefined;
      const roots = await list({ projectId, isRoot: true });
      return roots.some((r) => r.id === runId) ? runs : undefined;
    },
    20_000,
  );

describe("agent run tracing", () => {
  it("a run's trace is a root chain run named after the graph, with node chain runs and an llm run", async () => {
    const t = await agents.threads.create();
    const values = await agents.runs.wait(t.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    expect((values as any).messages.at(-1).content).toBe("echo: hi");
    const [agentRun] = await agents.runs.list(t.thread_id);
    const runs = await traceOf(agentRun.run_id);

    const roots = await list({ projectId, isRoot: true });
    const root = roots.find((r) => r.id === agentRun.run_id)!;
    expect(root).toMatchObject({
      name: "chat",
      run_type: "chain",
      status: "success",
      session_id: projectId,
      trace_id: agentRun.run_id,
      parent_run_id: null,
    });
    expect(root.extra?.metadata).toMatchObject({
      run_id: agentRun.run_id,
      thread_id: t.thread_id,
      graph_id: "chat",
      assistant_id: agentRun.assistant_id,
    });
    expect(root.inputs).toMatchObject({ messages: [{ content: "hi" }] });
    expect(root.outputs?.messages.at(-1)).toMatchObject({ content: "echo: hi" });

    const byName = (name: string) => runs.find((r) => r.name === name)!;
    for (const node of ["prepare", "reply"]) {
      expect(byName(node)).toMatchObject({
        run_type: "chain",
        status: "success",
        parent_run_id: root.id,
        trace_id: root.id,
      });
      expect(byName(node).dotted_order?.startsWith(`${root.dotted_order}.`)).toBe(true);
    }
    // Framework plumbing (LangGraph's hidden __start__ step) is not traced.
    expect(runs.map((r) => r.name).sort()).toEqual(["ScriptedChat", "chat", "prepare", "reply"]);

    const llm = runs.find((r) => r.run_type === "llm")!;
    expect(llm).toMatchObject({
      name: "ScriptedChat",
      status: "success",
      parent_run_id: byName("reply").id,
      trace_id: root.id,
      session_id: projectId,
    });
    expect(llm.parent_run_ids).toEqual([root.id, byName("reply").id]);
    expect(llm.inputs).toEqual({
      messages: [expect.objectContaining({ role: "user", content: [{ type: "text", text: "hi" }] })],
    });
    expect(llm.outputs?.messages).toEqual([
      expect.objectContaining({
        role: "assistant",
        content: [{ type: "text", text: "echo: hi" }],
        usage_metadata: { input_tokens: 12, output_tokens: 4, total_tokens: 16 },
      }),
    ]);
    expect(llm.extra?.metadata).toMatchObject({ ls_model_name: "gpt-4o-mini", run_id: agentRun.run_id });
  });

  it("the llm run carries the model's token counts and costs, and no first token time when it did not stream", async () => {
    const t = await agents.threads.create();
    await agents.runs.wait(t.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "cost?" }] },
    });
    const [agentRun] = await agents.runs.list(t.thread_id);
    const llm = (await traceOf(agentRun.run_id)).find((r) => r.run_type === "llm")!;
    const wire = (await call("GET", `/api/v1/runs/${llm.id}`, { headers: auth })).json;
    expect(wire).toMatchObject({
      prompt_tokens: 12,
      completion_tokens: 4,
      total_tokens: 16,
      tokens_estimated: false,
      first_token_time: null,
      format_errors: [],
    });
    expect(wire.total_cost).toBeGreaterThan(0);
    expect(wire.messages.output_messages[0]).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "echo: cost?" }],
    });
  });

  it("a streamed model call gets first_token_time from one new_token event, between its start and end", async () => {
    const t = await agents.threads.create();
    let runId = "";
    for await (const part of agents.runs.stream(t.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "stream please" }] },
      streamMode: "messages-tuple",
    }))
      if (part.event === "metadata") runId = (part.data as { run_id: string }).run_id;
    const llm = (await traceOf(runId)).find((r) => r.run_type === "llm")!;
    expect(llm.first_token_time).toEqual(expect.any(String));
    const ftt = Date.parse(String(llm.first_token_time));
    expect(ftt).toBeGreaterThanOrEqual(Date.parse(String(llm.start_time)));
    expect(ftt).toBeLessThanOrEqual(Date.parse(String(llm.end_time)));
    expect(llm.events?.filter((e) => e.name === "new_token")).toHaveLength(1);
    expect(llm.total_tokens).toBe(16);
    expect(llm.outputs?.messages[0]).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "echo: stream please" }],
    });
  });
});
