import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import type { ingestBatch } from "../../runs/ingest.ts";
import { RunCreate, RunPatch } from "../../runs/schema.ts";
import { startRunTrace } from "./run-tracing.ts";

// The tracer's run records and their batching, with the ingestion replaced by a recorder that validates
// them with the ingestion's schemas (the real ingestion is exercised end to end in test/agent-tracing.test.ts).
type Body = Record<string, any>;
const invalid: unknown[] = [];
// Every body the tracer sends passes the ingestion's own validation.
afterEach(() => expect(invalid.splice(0)).toEqual([]));

function recorder(fail = false) {
  const calls: { posts: Body[]; patches: { id: string; body: Body }[] }[] = [];
  const ingest = (async (_tenant: string, posts: unknown[], patches: { id: string; body: unknown }[]) => {
    calls.push({ posts: posts as Body[], patches: patches as { id: string; body: Body }[] });
    for (const p of posts) invalid.push(...(RunCreate.safeParse(p).error?.issues ?? []));
    for (const p of patches) invalid.push(...(RunPatch.safeParse(p.body).error?.issues ?? []));
    if (fail) throw new Error("ingestion down");
    return { accepted: [], errors: [] };
  }) as typeof ingestBatch;
  return { calls, ingest };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deployment = { tenant_id: "t1", tracing_project_id: "11111111-1111-4111-8111-111111111111" };
const ids = () => ({ run_id: crypto.randomUUID(), thread_id: crypto.randomUUID(), graph_id: "chat" });

function chatGraph(nodeDelayMs = 0) {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", async (s) => {
      await sleep(nodeDelayMs);
      return { messages: [await new FakeListChatModel({ responses: ["hello"] }).invoke(s.messages)] };
    })
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile();
}

async function runGraph(
  trace: NonNullable<ReturnType<typeof startRunTrace>>,
  extra: Record<string, unknown> = {},
  nodeDelayMs = 0,
) {
  const config: Record<string, any> = { streamMode: ["values"], ...extra };
  trace.attach(config);
  for await (const _ of await chatGraph(nodeDelayMs).stream(
    { messages: [{ role: "user", content: "hi" }] },
    config,
  ));
}

describe("agent run tracing", () => {
  it("a deployment without a tracing project is not traced", () => {
    expect(startRunTrace({ tenant_id: "t1", tracing_project_id: null }, ids())).toBeUndefined();
  });

  it("the graph run is the root chain run: the agent run's id, the graph's name, the run's ids as metadata", async () => {
    const rec = recorder();
    const run = ids();
    const trace = startRunTrace(deployment, { ...run, assistant_id: "a1" }, { flushMs: 60_000, ...rec })!;
    await runGraph(trace);
    await trace.end();
    const root = rec.calls.flatMap((c) => c.posts).find((p) => !p.parent_run_id)!;
    expect(root).toMatchObject({
      id: run.run_id,
      trace_id: run.run_id,
      name: "chat",
      run_type: "chain",
      session_id: deployment.tracing_project_id,
      extra: { metadata: { ...run, assistant_id: "a1" } },
    });
    expect(root.dotted_order).toMatch(new RegExp(`^\\d{8}T\\d{12}Z${run.run_id}$`));
  });

  it("a short run is one batch of complete posts: node chain runs, llm runs in the platform's message format, no hidden steps", async () => {
    const rec = recorder();
    const run = ids();
    const trace = startRunTrace(deployment, run, { flushMs: 60_000, ...rec })!;
    await runGraph(trace);
    await trace.end();
    expect(rec.calls).toHaveLength(1);
    const { posts, patches } = rec.calls[0];
    expect(patches).toEqual([]);
    expect(posts.map((p) => [p.name, p.run_type])).toEqual([
      ["chat", "chain"],
      ["reply", "chain"],
      ["FakeListChatModel", "llm"],
    ]);
    for (const p of posts) expect(p.end_time).toEqual(expect.any(String));
    const [root, node, llm] = posts;
    expect(node.parent_run_id).toBe(root.id);
    expect(llm.parent_run_id).toBe(node.id);
    expect(llm.dotted_order.startsWith(`${node.dotted_order}.`)).toBe(true);
    expect(llm.inputs).toEqual({ messages: [expect.objectContaining({ role: "user" })] });
    expect(llm.inputs.messages[0].content).toEqual([{ type: "text", text: "hi" }]);
    expect(llm.outputs.messages).toEqual([
      expect.objectContaining({ role: "assistant", content: [{ type: "text", text: "hello" }] }),
    ]);
    expect(llm.events.filter((e: Body) => e.name === "new_token")).toEqual([]);
  });

  it("a streamed model call keeps one new_token event, at the first token", async () => {
    const rec = recorder();
    const trace = startRunTrace(deployment, ids(), { flushMs: 60_000, ...rec })!;
    await runGraph(trace, { streamMode: ["messages"] });
    await trace.end();
    const llm = rec.calls[0].posts.find((p) => p.run_type === "llm")!;
    const tokens = llm.events.filter((e: Body) => e.name === "new_token");
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ time: expect.any(String), kwargs: { token: "h" } });
  });

  it("a run that outlives the flush timer is posted while it goes on, then ended by a patch", async () => {
    const rec = recorder();
    const run = ids();
    const trace = startRunTrace(deployment, run, { flushMs: 20, ...rec })!;
    await runGraph(trace, {}, 150);
    await trace.end();
    expect(rec.calls.length).toBeGreaterThanOrEqual(2);
    const first = rec.calls[0].posts.find((p) => p.id === run.run_id)!;
    expect(first.end_time).toBeUndefined();
    const patch = rec.calls.flatMap((c) => c.patches).find((p) => p.id === run.run_id)!;
    expect(patch.body).toMatchObject({ end_time: expect.any(String), outputs: expect.any(Object) });
    expect(patch.body.inputs).toBeUndefined();
  });

  it("runs still open when the agent run ends (cancelled) are ended with an error", async () => {
    const rec = recorder();
    const run = ids();
    const trace = startRunTrace(deployment, run, { flushMs: 60_000, ...rec })!;
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    await expect(runGraph(trace, { signal: ac.signal }, 500)).rejects.toThrow();
    await trace.end();
    const posts = rec.calls.flatMap((c) => c.posts);
    expect(posts.map((p) => p.name).sort()).toEqual(["chat", "reply"]);
    for (const p of posts) {
      expect(p.end_time).toEqual(expect.any(String));
      expect(p.error).toEqual(expect.any(String));
    }
  });

  it("an ingestion failure is retried (here twice), then logged: end() never throws", async () => {
    const rec = recorder(true);
    const trace = startRunTrace(deployment, ids(), { flushMs: 60_000, retryDelaysMs: [1, 1], ...rec })!;
    await runGraph(trace);
    await expect(trace.end()).resolves.toBeUndefined();
    expect(rec.calls).toHaveLength(3);
  });
});
