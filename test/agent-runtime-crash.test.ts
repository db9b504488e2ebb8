import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, deployedClient, runtimeHostPid } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { facts } from "./helpers/cloud.ts";

// Issue 13: a deployment's runtime that crashes is started again, and the runs it was executing are retried at
// once (not after their lease) from their last checkpoint.
const GRAPH = `
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const concat = { reducer: (a, b) => a.concat(b), default: () => [] };
// Which runtime ran a node: an id drawn when the runtime imported the graph.
const instance = crypto.randomUUID();
const State = Annotation.Root({ items: Annotation(concat), runtimes: Annotation(concat) });
export const graph = new StateGraph(State)
  .addNode("a", async () => ({ items: ["a"], runtimes: [instance] }))
  .addNode("b", async () => { await sleep(3000); return { items: ["b"], runtimes: [instance] }; })
  .addEdge(START, "a").addEdge("a", "b").addEdge("b", END).compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
  "src/graph.mjs": GRAPH,
});
let client: Client;
let deploymentId: string;

beforeAll(async () => {
  ({ client, deploymentId } = await deployedClient(facts, repo.dir, "crash"));
}, 180_000);
afterAll(() => repo.remove());

describe("a crashed runtime", () => {
  it("is started again and its run resumes from the last checkpoint at once, in the new runtime", async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "agent", { input: { items: ["in"] } });
    const crashed = await waitFor(
      "node a's checkpoint",
      async () =>
        ((await client.threads.getState(t.thread_id)).values as any).runtimes?.[0] as string | undefined,
      20_000,
      20,
    );
    const pid = runtimeHostPid(deploymentId);
    expect(pid).toEqual(expect.any(Number));
    expect(pid).not.toBe(facts.pid);
    process.kill(pid!, "SIGKILL");
    const t0 = performance.now();
    const done = await waitFor(
      "the retried run to end",
      async () => {
        const r = await client.runs.get(t.thread_id, run.run_id);
        return ["success", "error", "interrupted"].includes(r.status) ? r : undefined;
      },
      25_000,
      100,
    );
    // Well before its 30 s lease would have run out: the platform knew the runtime was gone.
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect(done.status).toBe("success");
    const values = (await client.threads.getState(t.thread_id)).values as {
      items: string[];
      runtimes: string[];
    };
    expect(values.items).toEqual(["in", "a", "b"]);
    expect(values.runtimes[1]).not.toBe(crashed);
    const frames = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
    expect(frames.filter((f) => f.event === "metadata").map((f) => f.data.attempt)).toEqual([1, 2]);
  });
});
