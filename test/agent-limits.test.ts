import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import type { Client } from "@langchain/langgraph-sdk";
import { Client as TraceClient, type Run as TracedRun } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, deployedClient } from "../harness/agents.ts";
import { newWorkspace, waitFor } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { MAX_AFTER_SECONDS } from "../shared/agent/runs/settings.ts";
import { s3 } from "../shared/aws/clients.ts";
import { getItem, queryAll } from "../shared/aws/ddb.ts";
import { config } from "../shared/config.ts";
import { agentKeys, checkpointPk } from "../shared/records/agent.ts";
import { s3ThreadPrefix } from "../shared/records/checkpoint-keys.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 16, item 6: the agent server within DynamoDB's limits and its own bounds, through the real SDK Client.
// `fanout` runs 15 branches at once, each returning ~280 KB to a channel of its own; `fanlist` appends the
// same to one reducer list: together far over one transaction's 4 MB, each item under 400 KB.
const GRAPH = `
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const N = 15;
const big = (i) => String(i % 10).repeat(280_000);
const own = {};
for (let i = 0; i < N; i++) own["c" + i] = Annotation();
const Own = Annotation.Root(own);
let g1 = new StateGraph(Own);
for (let i = 0; i < N; i++) g1 = g1.addNode("n" + i, async () => ({ ["c" + i]: big(i) })).addEdge(START, "n" + i).addEdge("n" + i, END);
export const fanout = g1.compile();
const List = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });
let g2 = new StateGraph(List);
for (let i = 0; i < N; i++) g2 = g2.addNode("n" + i, async () => ({ items: [big(i)] })).addEdge(START, "n" + i).addEdge("n" + i, END);
export const fanlist = g2.compile();
const One = Annotation.Root({ text: Annotation(), big: Annotation() });
export const cjk = new StateGraph(One)
  .addNode("say", async () => ({ text: "漢".repeat(150_000) }))
  .addEdge(START, "say").addEdge("say", END).compile();
export const echo = new StateGraph(One)
  .addNode("say", async ({ text }) => ({ text: "echo " + text, big: "z".repeat(350_000) }))
  .addEdge(START, "say").addEdge("say", END).compile();
`;
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: {
      fanout: "./src/graph.mjs:fanout",
      fanlist: "./src/graph.mjs:fanlist",
      echo: "./src/graph.mjs:echo",
      cjk: "./src/graph.mjs:cjk",
    },
    env: {},
  }),
  "src/graph.mjs": GRAPH,
};

let client: Client;
let deploymentId: string;
const repo = gitRepo(FILES);
afterAll(() => repo.remove());
beforeAll(async () => {
  ({ deploymentId, client } = await deployedClient(facts, repo.dir, "limits"));
});

const agent = (path: string, body?: unknown) =>
  call(body === undefined ? "GET" : "POST", `/agents/${deploymentId}${path}`, { headers: auth, body });

describe("grouped writes stay within DynamoDB's limits", () => {
  it("a fan-out of 15 branches returning ~280 KB each to channels of their own succeeds", async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "fanout", { input: {} })) as Record<
      string,
      string
    >;
    for (let i = 0; i < 15; i++) expect(values[`c${i}`]).toBe(String(i % 10).repeat(280_000));
    const state = await client.threads.getState<Record<string, string>>(thread.thread_id);
    expect(Object.keys(state.values)).toHaveLength(15);
    expect(state.values.c14).toHaveLength(280_000);
    // Its trace (~8 MB of outputs, twice the request limit) is ingested whole: cut into calls, and the root's
    // 4.2 MB output (over what one traced run may carry) replaced by a note of its size.
    const [agentRun] = await client.runs.list(thread.thread_id);
    const projectId = (await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).json
      .tracing_project_id;
    const traces = new TraceClient({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key });
    const runs = await waitFor(
      "the fan-out's trace",
      async () => {
        const out: TracedRun[] = [];
        for await (const r of traces.listRuns({ projectId, traceId: agentRun.run_id })) out.push(r);
        const nodes = out.filter((r) => /^n\d+$/.test(r.name) && r.end_time);
        const root = out.find((r) => r.id === agentRun.run_id);
        return nodes.length === 15 && root?.end_time ? out : undefined;
      },
      30_000,
    );
    const n3 = runs.find((r) => r.name === "n3")!;
    expect(n3.outputs?.c3).toBe("3".repeat(280_000));
    const root = runs.find((r) => r.id === agentRun.run_id)!;
    expect(root.status).toBe("success");
    expect(String(root.outputs?.__truncated__)).toMatch(/^outputs was \d+ bytes as JSON/);
  });

  it("a fan-out of 15 branches appending ~280 KB each to one reducer list succeeds", async () => {
    const thread = await client.threads.create();
    const parts = await collect(
      client.runs.stream(thread.thread_id, "fanlist", { input: {}, streamMode: ["values", "updates"] }),
    );
    expect(parts.filter((p) => p.event === "error")).toEqual([]);
    const state = await client.threads.getState<{ items: string[] }>(thread.thread_id);
    expect(state.values.items).toHaveLength(15);
    expect(state.values.items.map((s) => s.length)).toEqual(new Array(15).fill(280_000));
    const [run] = await client.runs.list(thread.thread_id);
    expect(run.status).toBe("success");
  });
});

describe("values copied into records are sized in UTF-8 bytes", () => {
  it("a run ending with 150,000 CJK characters (450 KB, not 150 KB) succeeds: no copy overflows an item", async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "cjk", { input: {} })) as { text: string };
    expect(values.text).toHaveLength(150_000);
    const [run] = await client.runs.list(thread.thread_id);
    expect(run.status).toBe("success");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });
});

describe("bounds: after_seconds", () => {
  it(`after_seconds above ${MAX_AFTER_SECONDS} (one year) is refused with a 422 naming the bound`, async () => {
    const thread = await client.threads.create();
    for (const after_seconds of [MAX_AFTER_SECONDS + 1, 1e300]) {
      const r = await agent(`/threads/${thread.thread_id}/runs`, { assistant_id: "echo", after_seconds });
      expect(r.status).toBe(422);
      expect(r.json.detail[0].loc).toEqual(["body", "after_seconds"]);
      expect(r.json.detail[0].msg).toMatch(/at most 31536000/);
    }
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
  });

  it("a run delayed beyond one timer's reach (30 days) waits: it stays pending", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "echo", {
      input: { text: "later" },
      afterSeconds: 30 * 24 * 3600,
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("pending");
    await client.runs.cancel(thread.thread_id, run.run_id);
  });
});

describe("thread ids are UUIDs, as on the LangGraph API", () => {
  it("a run that would create a thread whose id is no UUID (`#` in it) is refused with a 422", async () => {
    const r = await agent(`/threads/${encodeURIComponent("a#b")}/runs`, {
      assistant_id: "echo",
      if_not_exists: "create",
    });
    expect(r.status).toBe(422);
    expect(r.json.detail[0]).toMatchObject({
      loc: ["path", "thread_id"],
      msg: expect.stringMatching(/UUID/),
    });
  });

  it("threads.create with a thread id that is no UUID, and reads of one, answer 422", async () => {
    await expect(client.threads.create({ threadId: "not-a-uuid" })).rejects.toThrow(/422/);
    expect((await agent("/threads/not-a-uuid")).status).toBe(422);
    expect((await agent("/threads/not-a-uuid/state")).status).toBe(422);
  });
});

describe("stateless runs", () => {
  /** Every item and object under a thread's keys: its record, runs, their event logs, checkpoints, S3 parts. */
  async function leftOf(threadId: string, runId: string) {
    const scope = `${facts.tenant_id}#${deploymentId}`;
    const [thread, runs, events, checkpoints, objects] = await Promise.all([
      getItem("main", { PK: agentKeys.threadsPk(scope), SK: threadId }, true),
      queryAll("main", {
        KeyConditionExpression: "PK = :pk",
        values: { ":pk": agentKeys.runsPk(scope, threadId) },
        ConsistentRead: true,
      }),
      queryAll("main", {
        KeyConditionExpression: "PK = :pk",
        values: { ":pk": agentKeys.eventsPk(scope, runId) },
        ConsistentRead: true,
      }),
      queryAll("checkpoints", {
        KeyConditionExpression: "PK = :pk",
        values: { ":pk": checkpointPk(scope, threadId) },
        ConsistentRead: true,
      }),
      s3().send(
        new ListObjectsV2Command({
          Bucket: config.checkpointBucket,
          Prefix: s3ThreadPrefix(scope, threadId),
        }),
      ),
    ]);
    return {
      thread: thread ? 1 : 0,
      runs: runs.length,
      events: events.length,
      checkpoints: checkpoints.length,
      objects: objects.KeyCount ?? 0,
    };
  }
  const nothing = { thread: 0, runs: 0, events: 0, checkpoints: 0, objects: 0 };

  it("a stateless run's items go with its thread: run record, event log, checkpoints, writes, S3 parts", async () => {
    const run = await client.runs.create(null, "echo", { input: { text: "once" } });
    await waitFor(
      "every item of the stateless thread to be deleted",
      async () => {
        const left = await leftOf(run.thread_id, run.run_id);
        return JSON.stringify(left) === JSON.stringify(nothing) || undefined;
      },
      20_000,
      100,
    ).catch(async (err) => {
      throw new Error(`${err.message}: left ${JSON.stringify(await leftOf(run.thread_id, run.run_id))}`);
    });
  });

  it("with on_completion keep, the same count finds them all (the count sees what it should)", async () => {
    // The API's on_completion values (the SDK's type names others): sent as the reference server takes them.
    const run = (
      await agent("/runs", { assistant_id: "echo", input: { text: "kept" }, on_completion: "keep" })
    ).json;
    await client.runs.join(run.thread_id, run.run_id);
    const left = await leftOf(run.thread_id, run.run_id);
    expect(left.thread).toBe(1);
    expect(left.runs).toBe(1);
    expect(left.events).toBeGreaterThan(0);
    expect(left.checkpoints).toBeGreaterThan(0);
    expect(left.objects).toBeGreaterThan(0);
  });
});

describe("GET /agents/{id}/ok", () => {
  it("another workspace's deployment answers exactly as an unknown id", async () => {
    const other = await newWorkspace();
    const theirs = await call("GET", `/agents/${deploymentId}/ok`, { headers: other.headers });
    const unknown = await call("GET", `/agents/${crypto.randomUUID()}/ok`, { headers: other.headers });
    expect([theirs.status, theirs.json]).toEqual([unknown.status, unknown.json]);
    expect(theirs.status).toBe(404);
    expect((await call("GET", `/agents/${deploymentId}/ok`, { headers: auth })).json).toEqual({ ok: true });
  });

  it("without an API key every deployment id answers the same 401, read or not", async () => {
    const mine = await call("GET", `/agents/${deploymentId}/ok`);
    const unknown = await call("GET", `/agents/${crypto.randomUUID()}/ok`);
    expect(mine.status).toBe(401);
    expect([mine.status, mine.json]).toEqual([unknown.status, unknown.json]);
  });
});

describe("list inputs are bounded", () => {
  it("thread ids, namespaces, stream modes and interrupt nodes beyond their maximum are a 422 naming the list", async () => {
    const at = (p: string) => `/agents/${deploymentId}${p}`;
    const tooMany = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());
    const cases: [string, string, unknown, (string | number)[]][] = [
      ["POST", "/threads/search", { ids: tooMany(1001) }, ["body", "ids"]],
      [
        "PUT",
        "/store/items",
        { namespace: Array(101).fill("a"), key: "k", value: {} },
        ["body", "namespace"],
      ],
      [
        "POST",
        "/store/items/search",
        { namespace_prefix: Array(101).fill("a") },
        ["body", "namespace_prefix"],
      ],
      [
        "POST",
        "/runs/wait",
        { assistant_id: "echo", interrupt_before: Array(1001).fill("n") },
        ["body", "interrupt_before"],
      ],
    ];
    for (const [method, path, body, loc] of cases) {
      const r = await call(method, at(path), { headers: auth, body });
      expect(r.status, path).toBe(422);
      expect(
        r.json.detail.map((d: { loc: unknown[] }) => d.loc.slice(0, 2)),
        path,
      ).toContainEqual(loc);
    }
  });
});
