import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, deployedClient, runStatusSoon } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { queryAll } from "../shared/aws/ddb.ts";
import { agentKeys } from "../shared/records/agent.ts";
import { facts } from "./helpers/cloud.ts";

// Issue 27: `stream_resumable` as the reference server reads it. A resumable run keeps its frames, so a join
// after the fact (Last-Event-ID -1) replays them; a run created with `stream_resumable: false` delivers its
// frames live to the client streaming it and keeps none: a later join replays nothing, the event log is empty.
// (Omitted, a run here stays replayable, as every run was before: see the README.) `hold` takes 2 s.
const GRAPH = `
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const State = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });
export const quick = new StateGraph(State)
  .addNode("work", async () => ({ items: ["work"] }))
  .addEdge(START, "work").addEdge("work", END).compile();
export const hold = new StateGraph(State)
  .addNode("wait", async () => { await sleep(2000); return { items: ["held"] }; })
  .addEdge(START, "wait").addEdge("wait", END).compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({
    graphs: { quick: "./src/graph.mjs:quick", hold: "./src/graph.mjs:hold" },
    env: {},
  }),
  "src/graph.mjs": GRAPH,
});
let client: Client;
let deploymentId: string;
beforeAll(async () => {
  ({ deploymentId, client } = await deployedClient(facts, repo.dir, "resumable"));
});
afterAll(() => repo.remove());

/** The run's items in the event log table, read directly. */
const logged = (runId: string) =>
  queryAll("main", {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": agentKeys.eventsPk(`${facts.tenant_id}#${deploymentId}`, runId) },
    ConsistentRead: true,
  });

const streamed = async (threadId: string, streamResumable?: boolean) => {
  const parts = await collect(
    client.runs.stream(threadId, "quick", {
      input: { items: ["in"] },
      streamMode: ["values", "updates"],
      ...(streamResumable === undefined ? {} : { streamResumable }),
    }),
  );
  return { parts, runId: parts[0].data.run_id as string };
};

describe("stream_resumable", () => {
  it("a resumable run's stream is replayed by a later join, from the start or after Last-Event-ID", async () => {
    const t = await client.threads.create();
    const { parts, runId } = await streamed(t.thread_id, true);
    expect(parts.map((p) => p.event)).toEqual(["metadata", "values", "updates", "values"]);
    const again = await collect(client.runs.joinStream(t.thread_id, runId, { lastEventId: "-1" }));
    expect(again.map((p) => [p.event, p.data])).toEqual(parts.map((p) => [p.event, p.data]));
    const rest = await collect(client.runs.joinStream(t.thread_id, runId, { lastEventId: again[1].id }));
    expect(rest.map((p) => p.event)).toEqual(["updates", "values"]);
    expect((await logged(runId)).length).toBeGreaterThan(0);
  });

  it("a non-resumable run streams every frame live to its client and keeps none for a later join", async () => {
    const t = await client.threads.create();
    const { parts, runId } = await streamed(t.thread_id, false);
    expect(parts.map((p) => p.event)).toEqual(["metadata", "values", "updates", "values"]);
    expect(parts.at(-1)?.data).toEqual({ items: ["in", "work"] });
    expect(await collect(client.runs.joinStream(t.thread_id, runId, { lastEventId: "-1" }))).toEqual([]);
    expect(await collect(client.runs.joinStream(t.thread_id, runId))).toEqual([]);
    expect(await logged(runId)).toEqual([]);
    expect((await client.runs.get(t.thread_id, runId)).status).toBe("success");
  });

  it("joining a running non-resumable run gets its frames from the join on, none from before", async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "hold", {
      input: { items: ["in"] },
      streamMode: ["values"],
      streamResumable: false,
    });
    await runStatusSoon(client, t.thread_id, run.run_id, "running");
    // Inside the node's 2 s: the run's first frames went out before the join.
    await new Promise((r) => setTimeout(r, 500));
    const joined = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
    // The metadata frame and the input's values went out before the join; the node's result after it.
    expect(joined.map((p) => [p.event, p.data])).toEqual([["values", { items: ["in", "held"] }]]);
    expect(await logged(run.run_id)).toEqual([]);
  });

  it("a run created without stream_resumable stays replayable here", async () => {
    const t = await client.threads.create();
    const { parts, runId } = await streamed(t.thread_id);
    const again = await collect(client.runs.joinStream(t.thread_id, runId, { lastEventId: "-1" }));
    expect(again.map((p) => p.event)).toEqual(parts.map((p) => p.event));
  });
});
