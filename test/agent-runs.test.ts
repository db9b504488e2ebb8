import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, deployedClient, runStatusSoon } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { sweepExpiredThreads } from "../shared/agent/cleanup/thread-ttl.ts";
import { getItem, queryAll } from "../shared/aws/ddb.ts";
import { ACTIVE_RUNS, agentKeys, checkpointPk } from "../shared/records/agent.ts";
import { shardKey } from "../shared/records/shard.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 6 (threads, runs, streaming, multitask strategies) through the real @langchain/langgraph-sdk Client
// against a deployed graph repository. `slow` has a 300 ms node so concurrent runs really overlap.
const GRAPH = `
import { Annotation, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { getLogger } from "@langchain/langgraph-sdk/logging";
// Graphs written for the reference server call its global logger, at import and in nodes.
getLogger().info("graph module loaded", { graphs: 4 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const State = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });
export const slow = new StateGraph(State)
  .addNode("work", async () => { await sleep(300); return { items: ["work"] }; })
  .addNode("done", async (_s, config) => { config.writer?.({ progress: "done" }); return { items: ["done"] }; })
  .addEdge(START, "work").addEdge("work", "done").addEdge("done", END).compile();
// For gauges read while a run runs (the metrics read every shard of the index: more than 300 ms locally).
export const slower = new StateGraph(State)
  .addNode("work", async () => { await sleep(2000); return { items: ["work"] }; })
  .addEdge(START, "work").addEdge("work", END).compile();
// Runs until the test opens its thread's gate (a store item): gauges read while it runs, however loaded the machine.
export const gated = new StateGraph(State)
  .addNode("work", async (_s, config) => {
    const gate = config.configurable.thread_id;
    for (let i = 0; i < 1200 && !(await config.store.get(["gate"], gate)); i++) await sleep(100);
    return { items: ["work"] };
  })
  .addEdge(START, "work").addEdge("work", END).compile();
export const chat = new StateGraph(MessagesAnnotation)
  .addNode("reply", async (s) => ({ messages: [await new FakeListChatModel({ responses: ["echo: " + s.messages.at(-1).content] }).invoke(s.messages)] }))
  .addEdge(START, "reply").addEdge("reply", END).compile();
export const logged = new StateGraph(State)
  .addNode("log", async () => { getLogger().child({ node: "log" }).warn("node ran"); return { items: ["logged"] }; })
  .addEdge(START, "log").addEdge("log", END).compile();
// A factory: the reference server builds each run's graph from that run's config.
export const factory = async (config) => {
  const g = new StateGraph(State).addNode("base", async () => ({ items: ["base"] })).addEdge(START, "base");
  if (!config?.configurable?.extra_node) return g.addEdge("base", END).compile();
  return g.addNode("extra", async () => ({ items: ["extra"] })).addEdge("base", "extra").addEdge("extra", END).compile();
};
export const ask = new StateGraph(State)
  .addNode("ask", async () => ({ items: ["answer:" + interrupt("what?")] }))
  .addEdge(START, "ask").addEdge("ask", END).compile();
`;
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: {
      slow: "./src/graph.mjs:slow",
      slower: "./src/graph.mjs:slower",
      gated: "./src/graph.mjs:gated",
      chat: "./src/graph.mjs:chat",
      ask: "./src/graph.mjs:ask",
      logged: "./src/graph.mjs:logged",
      factory: "./src/graph.mjs:factory",
    },
    // The reference server's LANGGRAPH_CONFIG: a graph's default assistant's config and context.
    env: {
      LANGGRAPH_CONFIG: JSON.stringify({
        slow: { configurable: { tier: "gold" }, context: { user: "ann" } },
      }),
    },
  }),
  "src/graph.mjs": GRAPH,
};

let client: Client;
let deploymentId: string;
const repo = gitRepo(FILES);
afterAll(() => repo.remove());

beforeAll(async () => {
  ({ client, deploymentId } = await deployedClient(facts, repo.dir, "runs"));
});

const runningSoon = (threadId: string, runId: string) => runStatusSoon(client, threadId, runId, "running");

describe("threads", () => {
  it("create, get, patch, search, count, delete", async () => {
    const t = await client.threads.create({ metadata: { owner: "ann" } });
    expect(t).toMatchObject({ thread_id: expect.any(String), status: "idle", metadata: { owner: "ann" } });
    expect((await client.threads.get(t.thread_id)).thread_id).toBe(t.thread_id);
    const patched = await client.threads.update(t.thread_id, { metadata: { tier: "gold" } });
    expect(patched.metadata).toMatchObject({ owner: "ann", tier: "gold" });
    const found = await client.threads.search({ metadata: { tier: "gold" } });
    expect(found.map((x) => x.thread_id)).toContain(t.thread_id);
    expect(await client.threads.count({ metadata: { owner: "ann", tier: "gold" } })).toBeGreaterThanOrEqual(
      1,
    );
    await expect(client.threads.create({ threadId: t.thread_id, ifExists: "raise" })).rejects.toThrow(/409/);
    expect((await client.threads.create({ threadId: t.thread_id, ifExists: "do_nothing" })).thread_id).toBe(
      t.thread_id,
    );
    await client.threads.delete(t.thread_id);
    await expect(client.threads.get(t.thread_id)).rejects.toThrow(/404/);
  });

  it("search and count read the threads page by page: sort, offset and limit hold across Query pages", async () => {
    // ~60 KB of metadata each: 24 threads span two 1 MB Query pages.
    const pad = "x".repeat(60_000);
    const batch = crypto.randomUUID();
    const made = [];
    for (let i = 0; i < 24; i++) made.push(await client.threads.create({ metadata: { batch, n: i, pad } }));
    const ids = (list: { thread_id: string }[]) => list.map((t) => t.thread_id);
    const all = await client.threads.search({ metadata: { batch }, limit: 30 });
    expect(new Set(ids(all))).toEqual(new Set(ids(made)));
    const at = all.map((t) => t.created_at);
    expect(at).toEqual([...at].sort().reverse());
    // A deep page is the same slice of the same order (ties broken by thread id, the same every time).
    const page = await client.threads.search({ metadata: { batch }, limit: 5, offset: 10 });
    expect(ids(page)).toEqual(ids(all).slice(10, 15));
    const asc = await client.threads.search({
      metadata: { batch },
      limit: 30,
      sortBy: "created_at",
      sortOrder: "asc",
    });
    expect(asc.map((t) => t.created_at)).toEqual([...at].sort());
    expect(await client.threads.count({ metadata: { batch } })).toBe(24);
    const r = await fetch(`${facts.base_url}/agents/${deploymentId}/threads/search`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ metadata: { batch }, limit: 4, offset: 20 }),
    });
    expect(r.headers.get("x-pagination-total")).toBe("24");
    for (const t of made) await client.threads.delete(t.thread_id);
  });

  it("state, state at a checkpoint, update_state, history and copy", async () => {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "slow", { input: { items: ["in"] } });
    const state = await client.threads.getState(t.thread_id);
    expect(state.values).toEqual({ items: ["in", "work", "done"] });
    expect(state.next).toEqual([]);
    expect(state.checkpoint.checkpoint_id).toEqual(expect.any(String));
    const history = await client.threads.getHistory(t.thread_id);
    expect(history.length).toBeGreaterThanOrEqual(3);
    expect(history[0].checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    const earlier = await client.threads.getState(t.thread_id, history[1].checkpoint.checkpoint_id!);
    expect(earlier.values).toEqual({ items: ["in", "work"] });
    await client.threads.updateState(t.thread_id, { values: { items: ["edited"] }, asNode: "done" });
    expect((await client.threads.getState(t.thread_id)).values).toEqual({
      items: ["in", "work", "done", "edited"],
    });
    // An update the graph refuses is the request's fault: 400 with LangGraph's message, the state unchanged.
    await expect(
      client.threads.updateState(t.thread_id, { values: { items: ["x"] }, asNode: "nope" }),
    ).rejects.toThrow(/400.*nope/s);
    const copy = await client.threads.copy(t.thread_id);
    expect(copy.thread_id).not.toBe(t.thread_id);
    expect((await client.threads.getState(copy.thread_id)).values).toEqual({
      items: ["in", "work", "done", "edited"],
    });
    expect((await client.threads.get(t.thread_id)).values).toEqual({ items: ["in", "work", "done"] });
  });

  it("update_state while a run is pending or running answers 409 and changes nothing; after the run it applies", async () => {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "slow", { input: { items: ["in"] } });
    const before = await client.threads.getState(t.thread_id);
    // A delayed run is pending on the thread for a minute.
    const run = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["later"] },
      afterSeconds: 60,
    });
    await expect(
      client.threads.updateState(t.thread_id, { values: { items: ["edited"] }, asNode: "done" }),
    ).rejects.toThrow(/409.*pending or running run/s);
    expect((await client.threads.getState(t.thread_id)).checkpoint.checkpoint_id).toBe(
      before.checkpoint.checkpoint_id,
    );
    await client.runs.cancel(t.thread_id, run.run_id);
    await client.threads.updateState(t.thread_id, { values: { items: ["edited"] }, asNode: "done" });
    expect((await client.threads.getState(t.thread_id)).values).toEqual({
      items: ["in", "work", "done", "edited"],
    });
  });

  it("threads.create with supersteps builds the thread's history; graphless supersteps are refused", async () => {
    const t = await client.threads.create({
      graphId: "slow",
      supersteps: [
        { updates: [{ values: { items: ["a"] }, asNode: "work" }] },
        { updates: [{ values: { items: ["b"] }, asNode: "done" }] },
      ],
    });
    const state = await client.threads.getState(t.thread_id);
    expect(state.values).toEqual({ items: ["a", "b"] });
    expect(state.next).toEqual([]);
    expect((await client.threads.getHistory(t.thread_id)).length).toBeGreaterThanOrEqual(2);
    // The thread continues from there like any other.
    expect(await client.runs.wait(t.thread_id, "slow", { input: { items: ["c"] } })).toEqual({
      items: ["a", "b", "c", "work", "done"],
    });
    await expect(
      client.threads.create({ supersteps: [{ updates: [{ values: {}, asNode: "work" }] }] }),
    ).rejects.toThrow(/422/);
    await expect(
      client.threads.create({ graphId: "slow", supersteps: [{ updates: [{ values: {}, asNode: "nope" }] }] }),
    ).rejects.toThrow(/400.*nope/s);
  });

  it("a thread's TTL runs out: the sweep deletes it with its runs and checkpoints; a renewed TTL keeps it", async () => {
    const short = await client.threads.create({ ttl: { ttl: 0.01, strategy: "delete" } });
    await client.runs.wait(short.thread_id, "slow", { input: { items: ["x"] } });
    const renewed = await client.threads.create({ ttl: 0.01 });
    await client.threads.update(renewed.thread_id, { ttl: 60 });
    const kept = await client.threads.create();
    await new Promise((r) => setTimeout(r, 1200));
    // This sweep, or the platform's own sweep scheduled at the short thread's expiry, deletes it.
    const swept = await sweepExpiredThreads();
    expect(swept.nextCheck).toBeGreaterThan(Date.now());
    await expect(client.threads.get(short.thread_id)).rejects.toThrow(/404/);
    const scope = `${facts.tenant_id}#${deploymentId}`;
    const left = await queryAll("checkpoints", {
      KeyConditionExpression: "PK = :pk",
      values: { ":pk": checkpointPk(scope, short.thread_id) },
      ConsistentRead: true,
    });
    expect(left).toEqual([]);
    expect((await client.threads.get(renewed.thread_id)).thread_id).toBe(renewed.thread_id);
    expect((await client.threads.get(kept.thread_id)).thread_id).toBe(kept.thread_id);
    // TTL fields stay private; a strategy other than delete is refused.
    expect(Object.keys(await client.threads.get(renewed.thread_id))).not.toContain("ttl_expires_at");
    await expect(client.threads.create({ ttl: { ttl: 5, strategy: "keep" as "delete" } })).rejects.toThrow(
      /422/,
    );
  });
});

describe("assistants", () => {
  it("not-found and conflict answers keep the reference server's wording in the JSON detail", async () => {
    const id = crypto.randomUUID();
    const thread = await call("GET", `/agents/${deploymentId}/threads/${id}`, { headers: auth });
    expect(thread.status).toBe(404);
    expect(thread.json.detail).toBe(`Thread with ID ${id} not found`);
    const assistant = await call("GET", `/agents/${deploymentId}/assistants/${id}`, { headers: auth });
    expect(assistant.status).toBe(404);
    expect(assistant.json.detail).toBe("Assistant not found");
    const t = await client.threads.create();
    const again = await call("POST", `/agents/${deploymentId}/threads`, {
      headers: auth,
      body: { thread_id: t.thread_id, if_exists: "raise" },
    });
    expect(again.status).toBe(409);
    expect(again.json.detail).toBe("Thread already exists");
  });

  it("LANGGRAPH_CONFIG in the deployment's env gives a graph's default assistant its config and context", async () => {
    const [slow] = await client.assistants.search({ graphId: "slow", metadata: { created_by: "system" } });
    expect(slow.config).toMatchObject({ configurable: { tier: "gold" } });
    expect(slow.context).toEqual({ user: "ann" });
    const [chat] = await client.assistants.search({ graphId: "chat", metadata: { created_by: "system" } });
    expect(chat.context).toEqual({});
  });
});

describe("runs", () => {
  it("a graph that calls the SDK's getLogger() (at import and in a node) loads and runs", async () => {
    const t = await client.threads.create();
    expect(await client.runs.wait(t.thread_id, "logged", { input: { items: [] } })).toEqual({
      items: ["logged"],
    });
  });

  it("a graph exported as a factory is built per run from the run's config", async () => {
    const plain = await client.threads.create();
    expect(await client.runs.wait(plain.thread_id, "factory", { input: { items: [] } })).toEqual({
      items: ["base"],
    });
    const extra = await client.threads.create();
    const out = await client.runs.wait(extra.thread_id, "factory", {
      input: { items: [] },
      config: { configurable: { extra_node: true } },
    });
    expect(out).toEqual({ items: ["base", "extra"] });
    // State calls rebuild the factory from the config the thread's run ran with: its node "extra" exists there.
    await client.threads.updateState(extra.thread_id, { values: { items: ["edited"] }, asNode: "extra" });
    const state = await client.threads.getState(extra.thread_id);
    expect(state.values).toEqual({ items: ["base", "extra", "edited"] });
    expect(state.metadata).toMatchObject({ source: "update" });
    // The plain thread's graph has no such node.
    await expect(
      client.threads.updateState(plain.thread_id, { values: { items: ["x"] }, asNode: "extra" }),
    ).rejects.toThrow(/400.*extra/s);
  });

  it("runs.wait answers the final state; list and get show the run", async () => {
    const t = await client.threads.create();
    const values = await client.runs.wait(t.thread_id, "slow", { input: { items: ["a"] } });
    expect(values).toEqual({ items: ["a", "work", "done"] });
    const runs = await client.runs.list(t.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      status: "success",
      thread_id: t.thread_id,
      multitask_strategy: "enqueue",
    });
    expect((await client.runs.get(t.thread_id, runs[0].run_id)).status).toBe("success");
  });

  it("runs.stream yields values, updates, custom, debug and messages-tuple events", async () => {
    const t = await client.threads.create();
    const parts = await collect(
      client.runs.stream(t.thread_id, "slow", {
        input: { items: ["s"] },
        streamMode: ["values", "updates", "custom", "debug"],
      }),
    );
    expect(parts[0].event).toBe("metadata");
    expect(parts[0].data).toMatchObject({ run_id: expect.any(String) });
    const of = (e: string) => parts.filter((p) => p.event === e).map((p) => p.data);
    expect(of("values").at(-1)).toEqual({ items: ["s", "work", "done"] });
    expect(of("updates")).toEqual([{ work: { items: ["work"] } }, { done: { items: ["done"] } }]);
    expect(of("custom")).toEqual([{ progress: "done" }]);
    expect(of("debug").length).toBeGreaterThan(0);
    const chat = await client.threads.create();
    const msgs = await collect(
      client.runs.stream(chat.thread_id, "chat", {
        input: { messages: [{ role: "user", content: "hi" }] },
        streamMode: "messages-tuple",
      }),
    );
    const tuples = msgs.filter((p) => p.event === "messages").map((p) => p.data);
    expect(tuples.length).toBeGreaterThan(0);
    expect(tuples.map((t) => t[0].content).join("")).toBe("echo: hi");
    expect(tuples[0][0].type).toMatch(/^ai/i);
    expect(tuples[0][1]).toMatchObject({ langgraph_node: "reply" });
  });

  it("stream_mode \"events\" yields the run's LangChain v2 events: graph, nodes and the chat model's tokens", async () => {
    const chat = await client.threads.create();
    const parts = await collect(
      client.runs.stream(chat.thread_id, "chat", {
        input: { messages: [{ role: "user", content: "ev" }] },
        streamMode: ["events", "values"],
      }),
    );
    const run = parts[0].data.run_id;
    const events = parts.filter((p) => p.event === "events").map((p) => p.data);
    expect(events[0]).toMatchObject({ event: "on_chain_start", run_id: run, parent_ids: [] });
    expect(events.at(-1)).toMatchObject({ event: "on_chain_end", run_id: run });
    expect(events.at(-1).data.output.messages.at(-1)).toMatchObject({ content: "echo: ev" });
    const node = events.find((e) => e.event === "on_chain_start" && e.name === "reply");
    expect(node.metadata).toMatchObject({ langgraph_node: "reply" });
    const tokens = events.filter((e) => e.event === "on_chat_model_stream").map((e) => e.data.chunk.content);
    expect(tokens.join("")).toBe("echo: ev");
    expect(events.some((e) => e.event === "on_chat_model_end")).toBe(true);
    // values frames still come alongside.
    const values = parts.filter((p) => p.event === "values");
    expect(values.at(-1)!.data.messages.at(-1)).toMatchObject({ content: "echo: ev" });
  });

  it('stream_mode "messages" yields messages/metadata, messages/partial and one messages/complete per message', async () => {
    const chat = await client.threads.create();
    const parts = await collect(
      client.runs.stream(chat.thread_id, "chat", {
        input: { messages: [{ role: "user", content: "yo" }] },
        streamMode: "messages",
      }),
    );
    const events = parts.map((p) => p.event).filter((e) => e.startsWith("messages"));
    expect(events[0]).toBe("messages/metadata");
    expect(events.filter((e) => e === "messages/complete")).toHaveLength(1);
    expect(events.at(-1)).toBe("messages/complete");
    const complete = parts.find((p) => p.event === "messages/complete")!.data;
    expect(complete).toHaveLength(1);
    expect(complete[0]).toMatchObject({ content: "echo: yo" });
    expect(complete[0].type).toMatch(/^ai/i);
    const meta = parts.find((p) => p.event === "messages/metadata")!.data;
    expect(Object.values(meta)[0]).toMatchObject({ metadata: { langgraph_node: "reply" } });
    // Partials grow towards the complete message.
    const partials = parts.filter((p) => p.event === "messages/partial").map((p) => p.data[0].content);
    for (const text of partials) expect("echo: yo".startsWith(text)).toBe(true);
    // No raw tuples unless messages-tuple is asked for too.
    expect(parts.some((p) => p.event === "messages")).toBe(false);
  });

  it("an interrupt_before run stops with the thread interrupted and resumes with a command", async () => {
    const t = await client.threads.create();
    const first = await client.runs.wait(t.thread_id, "slow", {
      input: { items: ["i"] },
      interruptBefore: ["done"],
    });
    expect(first).toMatchObject({ items: ["i", "work"] });
    expect((await client.threads.get(t.thread_id)).status).toBe("interrupted");
    expect((await client.threads.getState(t.thread_id)).next).toEqual(["done"]);
    const resumed = await client.runs.wait(t.thread_id, "slow", { command: { resume: "go" } });
    expect(resumed).toEqual({ items: ["i", "work", "done"] });
    expect((await client.threads.get(t.thread_id)).status).toBe("idle");
  });

  it("a run hitting interrupt() resumes with the value of command.resume", async () => {
    const t = await client.threads.create();
    const first = (await client.runs.wait(t.thread_id, "ask", { input: { items: [] } })) as any;
    expect(first.__interrupt__[0].value).toBe("what?");
    expect((await client.threads.get(t.thread_id)).status).toBe("interrupted");
    // The pending task as the reference server shows it: with LangGraph's path and no result yet.
    const [task] = (await client.threads.getState(t.thread_id)).tasks;
    expect(task).toMatchObject({
      name: "ask",
      path: ["__pregel_pull", "ask"],
      interrupts: [{ value: "what?" }],
    });
    const resumed = await client.runs.wait(t.thread_id, "ask", { command: { resume: "42" } });
    expect(resumed).toEqual({ items: ["answer:42"] });
  });

  it("debug events carry checkpoint and parent_checkpoint as the reference server's do", async () => {
    const t = await client.threads.create();
    const parts = await collect(
      client.runs.stream(t.thread_id, "slow", { input: { items: ["d"] }, streamMode: "debug" }),
    );
    const checkpoints = parts.filter((p) => p.event === "debug" && p.data.type === "checkpoint");
    expect(checkpoints.length).toBeGreaterThanOrEqual(3);
    const ids = checkpoints.map((p) => p.data.payload.checkpoint.checkpoint_id);
    expect(ids.every((id) => typeof id === "string")).toBe(true);
    expect(checkpoints[0].data.payload.checkpoint).toMatchObject({
      thread_id: t.thread_id,
      checkpoint_ns: "",
    });
    // Each checkpoint's parent is the one before it.
    for (let i = 1; i < checkpoints.length; i++)
      expect(checkpoints[i].data.payload.parent_checkpoint.checkpoint_id).toBe(ids[i - 1]);
  });

  it("GET /metrics answers the run-queue gauges in Prometheus text (or JSON)", async () => {
    const metrics = async () => {
      const r = await call("GET", `/agents/${deploymentId}/metrics?format=json`, { headers: auth });
      expect(r.status).toBe(200);
      return r.json as { lg_api_num_pending_runs: number; lg_api_num_running_runs: number };
    };
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "gated", { input: { items: ["m"] } });
    await runningSoon(t.thread_id, run.run_id);
    const queued = await client.runs.create(t.thread_id, "gated", {
      input: { items: ["n"] },
      multitaskStrategy: "enqueue",
    });
    expect(await metrics()).toEqual({ lg_api_num_pending_runs: 1, lg_api_num_running_runs: 1 });
    // Issue 26: each active run's index entry sits in the shard of its id, not under one key every tenant writes.
    const scope = `${facts.tenant_id}#${deploymentId}`;
    for (const id of [run.run_id, queued.run_id])
      expect(await getItem("main", { PK: agentKeys.runsPk(scope, t.thread_id), SK: id }, true)).toMatchObject(
        {
          AGENT1PK: shardKey(ACTIVE_RUNS, id),
        },
      );
    const text = await call("GET", `/agents/${deploymentId}/metrics`, { headers: auth });
    expect(text.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(text.text).toContain("# TYPE lg_api_num_running_runs gauge");
    expect(text.text).toContain(`lg_api_num_running_runs{deployment_id="${deploymentId}"} 1`);
    await client.store.putItem(["gate"], t.thread_id, { open: true });
    await client.runs.join(t.thread_id, queued.run_id);
    expect(await metrics()).toEqual({ lg_api_num_pending_runs: 0, lg_api_num_running_runs: 0 });
    expect((await call("GET", `/agents/${deploymentId}/metrics`)).status).toBe(401);
  });

  // Issue 26: behind CloudFront (60 s to the first byte) a silent wait is a 504. The status and headers go at
  // once, then a newline every AGENT_WAIT_KEEPALIVE_MS (100 ms in tests; the run takes 300 ms), then the values.
  it("runs/wait and join answer at once and send newlines until the values, which the SDK parses as before", async () => {
    const t = await client.threads.create();
    const res = await fetch(`${base}/agents/${deploymentId}/threads/${t.thread_id}/runs/wait`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "slow", input: { items: ["k"] } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("content-location")).toMatch(new RegExp(`^/threads/${t.thread_id}/runs/`));
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const chunks: string[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(decoder.decode(r.value));
    // Bytes before the values came while the run was still going: newlines only.
    expect(chunks[0]).toMatch(/^\n+$/);
    const body = chunks.join("");
    expect(body).toMatch(/^\n{2,}\{/);
    expect(JSON.parse(body)).toEqual({ items: ["k", "work", "done"] });

    expect(await client.runs.wait(t.thread_id, "slow", { input: { items: ["l"] } })).toEqual({
      items: ["k", "work", "done", "l", "work", "done"],
    });
    const background = await client.runs.create(t.thread_id, "slow", { input: { items: ["m"] } });
    expect(await client.runs.join(t.thread_id, background.run_id)).toEqual({
      items: ["k", "work", "done", "l", "work", "done", "m", "work", "done"],
    });
    expect(await client.runs.wait(null, "slow", { input: { items: ["s"] } })).toEqual({
      items: ["s", "work", "done"],
    });
  });

  it("join waits for a background run; join-stream replays it, also after Last-Event-ID", async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["j"] },
      streamMode: ["values", "updates"],
    });
    expect(run.status).toBe("pending");
    expect(await client.runs.join(t.thread_id, run.run_id)).toEqual({ items: ["j", "work", "done"] });
    const all = await collect(client.runs.joinStream(t.thread_id, run.run_id));
    expect(all.map((p) => p.event)).toEqual(["metadata", "values", "updates", "values", "updates", "values"]);
    // Event ids count from 0, as the reference server's do; -1 (the SDK's "from the start") replays them all.
    expect(all.map((p) => p.id)).toEqual(["0", "1", "2", "3", "4", "5"]);
    const rest = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "3" }));
    expect(rest.map((p) => p.event)).toEqual(["updates", "values"]);
    expect(await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }))).toEqual(
      all,
    );
  });

  it("cancel interrupts a running run within a second and keeps its checkpoints", async () => {
    const t = await client.threads.create();
    // A node of 2 s: the cancel lands while it runs, however long the requests take on a busy machine.
    const run = await client.runs.create(t.thread_id, "slower", { input: { items: ["c"] } });
    await runningSoon(t.thread_id, run.run_id);
    const started = Date.now();
    await client.runs.cancel(t.thread_id, run.run_id, true, "interrupt");
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await client.runs.get(t.thread_id, run.run_id)).status).toBe("interrupted");
    expect((await client.threads.getState(t.thread_id)).values).toEqual({ items: ["c"] });
  });

  it("stateless runs: wait and stream", async () => {
    expect(await client.runs.wait(null, "slow", { input: { items: ["x"] } })).toEqual({
      items: ["x", "work", "done"],
    });
    const parts = await collect(client.runs.stream(null, "slow", { input: { items: ["y"] } }));
    expect(parts.at(-1)).toMatchObject({ event: "values", data: { items: ["y", "work", "done"] } });
  });
});

describe("strict resume", () => {
  it("a resume naming no waiting interrupt fails the run and leaves the thread interrupted; without it the answer is ignored", async () => {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, "ask", { input: {} });
    expect((await client.threads.get(t.thread_id)).status).toBe("interrupted");
    const bogus = { resume: { "0123456789abcdef0123456789abcdef": "red" } };
    const refused = await client.runs.create(t.thread_id, "ask", { command: bogus, strictResume: true });
    await client.runs.join(t.thread_id, refused.run_id);
    expect((await client.runs.get(t.thread_id, refused.run_id)).status).toBe("error");
    expect((await client.threads.get(t.thread_id)).status).toBe("interrupted");
    expect((await client.threads.getState(t.thread_id)).next).toEqual(["ask"]);
    // Not strict: the unmatched answer is ignored and the run ends as it began, interrupted again.
    const lax = await client.runs.create(t.thread_id, "ask", { command: bogus });
    await client.runs.join(t.thread_id, lax.run_id);
    expect((await client.runs.get(t.thread_id, lax.run_id)).status).toBe("success");
    expect((await client.threads.get(t.thread_id)).status).toBe("interrupted");
    // The answer to the waiting interrupt resumes it, strict or not.
    const values = await client.runs.wait(t.thread_id, "ask", {
      command: { resume: "blue" },
      strictResume: true,
    });
    expect(values).toEqual({ items: ["answer:blue"] });
  });
});

describe("durability", () => {
  /** A two-step run on a new thread with the given options: its final values and how many checkpoints it left. */
  const runWith = async (opts: { durability?: "async" | "sync" | "exit"; checkpointDuring?: boolean }) => {
    const t = await client.threads.create();
    const values = await client.runs.wait(t.thread_id, "slow", { input: { items: ["in"] }, ...opts });
    return { values, checkpoints: (await client.threads.getHistory(t.thread_id, { limit: 50 })).length };
  };

  it("exit stores only what the run ends with, sync and the default every step; checkpointDuring false is exit", async () => {
    const [byDefault, sync, exit, notDuring] = [
      await runWith({}),
      await runWith({ durability: "sync" }),
      await runWith({ durability: "exit" }),
      await runWith({ checkpointDuring: false }),
    ];
    for (const r of [byDefault, sync, exit, notDuring])
      expect(r.values).toEqual({ items: ["in", "work", "done"] });
    expect(byDefault.checkpoints).toBe(4);
    expect(sync.checkpoints).toBe(4);
    expect(exit.checkpoints).toBe(1);
    expect(notDuring.checkpoints).toBe(1);
  });

  it("an unknown durability and feedback_keys are refused with a 422 saying why", async () => {
    const t = await client.threads.create();
    const post = (body: Record<string, unknown>) =>
      call("POST", `/agents/${deploymentId}/threads/${t.thread_id}/runs`, {
        headers: auth,
        body: { assistant_id: "slow", input: {}, ...body },
      });
    const bad = await post({ durability: "later" });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toContain("durability");
    const keys = await post({ feedback_keys: ["thumbs"] });
    expect(keys.status).toBe(422);
    expect(keys.json.detail[0].msg).toMatch(/feedback_keys .* not served here/);
    await expect(
      client.runs.create(t.thread_id, "slow", { input: {}, feedbackKeys: ["thumbs"] }),
    ).rejects.toThrow(/422/);
    expect(await client.runs.list(t.thread_id)).toEqual([]);
  });
});

describe("multitask strategies", () => {
  it("reject answers 409 while a run is active", async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "slower", { input: { items: ["1"] } });
    await expect(
      client.runs.create(t.thread_id, "slow", { input: { items: ["2"] }, multitaskStrategy: "reject" }),
    ).rejects.toThrow(/409/);
    await client.runs.join(t.thread_id, run.run_id);
  });

  it("enqueue runs one after the other, in order", async () => {
    const t = await client.threads.create();
    const a = await client.runs.create(t.thread_id, "slower", { input: { items: ["a"] } });
    const b = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["b"] },
      multitaskStrategy: "enqueue",
    });
    expect((await client.runs.get(t.thread_id, b.run_id)).status).toBe("pending");
    expect(await client.runs.join(t.thread_id, b.run_id)).toEqual({
      items: ["a", "work", "b", "work", "done"],
    });
    expect((await client.runs.get(t.thread_id, a.run_id)).status).toBe("success");
  });

  it("interrupt stops the active run (checkpoints kept) and the new run continues from them", async () => {
    const t = await client.threads.create();
    // A node of 2 s: the interrupt lands while it runs, however long the requests take on a busy machine.
    const a = await client.runs.create(t.thread_id, "slower", { input: { items: ["a"] } });
    await runningSoon(t.thread_id, a.run_id);
    const b = await client.runs.create(t.thread_id, "slower", {
      input: { items: ["b"] },
      multitaskStrategy: "interrupt",
    });
    expect(await client.runs.join(t.thread_id, b.run_id)).toEqual({ items: ["a", "b", "work"] });
    expect((await client.runs.get(t.thread_id, a.run_id)).status).toBe("interrupted");
  });

  it("rollback deletes the running run with its checkpoints; the state holds only the new run's data", async () => {
    const t = await client.threads.create();
    const a = await client.runs.create(t.thread_id, "slower", { input: { items: ["a"] } });
    await runningSoon(t.thread_id, a.run_id);
    const b = await client.runs.create(t.thread_id, "slow", {
      input: { items: ["b"] },
      multitaskStrategy: "rollback",
    });
    expect(await client.runs.join(t.thread_id, b.run_id)).toEqual({ items: ["b", "work", "done"] });
    await expect(client.runs.get(t.thread_id, a.run_id)).rejects.toThrow(/404/);
    expect((await client.threads.getState(t.thread_id)).values).toEqual({ items: ["b", "work", "done"] });
    const history = await client.threads.getHistory(t.thread_id, { limit: 100 });
    expect(history.every((s) => s.metadata?.run_id === b.run_id)).toBe(true);
  });

  it("concurrent rollbacks: every create is accepted and exactly one run survives", async () => {
    const t = await client.threads.create();
    const first = await client.runs.create(t.thread_id, "slower", { input: { items: ["0"] } });
    await runningSoon(t.thread_id, first.run_id);
    const created = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        client.runs.create(t.thread_id, "slow", {
          input: { items: [String(i)] },
          multitaskStrategy: "rollback",
        }),
      ),
    );
    expect(created).toHaveLength(5);
    const survivor = await waitFor(
      "one run to survive",
      async () => {
        const runs = await client.runs.list(t.thread_id, { limit: 100 });
        return runs.length === 1 && runs[0].status === "success" ? runs[0] : undefined;
      },
      20_000,
      100,
    );
    const state = await client.threads.getState(t.thread_id);
    expect((state.values as any).items).toHaveLength(3);
    expect((state.values as any).items.slice(1)).toEqual(["work", "done"]);
    expect(created.map((r) => r.run_id)).toContain(survivor.run_id);
  });
});
