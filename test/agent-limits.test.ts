import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, deployedClient } from "./helpers/agents.ts";
import { auth, call, facts } from "./helpers/cloud.ts";
import { gitRepo } from "./helpers/repos.ts";

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
`;
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: { fanout: "./src/graph.mjs:fanout", fanlist: "./src/graph.mjs:fanlist" },
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
