import { afterAll, expect, it } from "vitest";
import { type RunningPlatform, startPlatform } from "../bench/platform.ts";
import { agentClient } from "./helpers/agents.ts";
import { platformApi, waitFor } from "./helpers/export.ts";
import { callAt } from "./helpers/http.ts";
import { deployRepo, gitRepo } from "./helpers/repos.ts";

// Issue 25: a sandboxed runtime has limits (here a 384 MB heap), and a limit that ends it says so — in the error
// of the run it was executing (once the run's retries are spent, each of which ends the same way) and in its
// revision's deploy log. The runtime is started again for the next request.
const GRAPH = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ size: Annotation() });
export const graph = new StateGraph(State)
  .addNode("hog", async (s) => {
    if (s.size === "small") return { size: "fine" };
    const keep = [];
    for (;;) keep.push(new Array(1_000_000).fill(keep.length));
  })
  .addEdge(START, "hog").compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
  "src/graph.mjs": GRAPH,
});
let platform: RunningPlatform | undefined;
afterAll(async () => {
  await platform?.stop();
  repo.remove();
});

it("a runtime that outgrows its memory is stopped; the run's error and the deploy log say which limit", async () => {
  platform = await startPlatform({ LOG_LEVEL: "error", AGENT_RUNTIME_MEMORY_MB: "384" });
  const headers = { "X-Api-Key": platform.facts.api_key, "X-Tenant-Id": platform.facts.tenant_id };
  const { deploymentId, revisionId } = await deployRepo(repo.dir, "limits", callAt(platform.base), headers);
  const client = agentClient(platform.facts, deploymentId);
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "agent", { input: { size: "huge" } });
  const ended = await waitFor(
    "the run to fail",
    async () => {
      const r = await client.runs.get(thread.thread_id, run.run_id);
      return r.status === "error" ? r : undefined;
    },
    90_000,
    250,
  );
  expect(ended.status).toBe("error");
  // The run (and its thread) carry the reason the runtime gave up.
  const seen = JSON.stringify(ended) + JSON.stringify(await client.threads.get(thread.thread_id));
  expect(seen).toMatch(/ran out of its 384 MB of memory/);
  const api = platformApi(platform);
  const logs = await waitFor("the deploy log's line", async () => {
    const r = await api("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs`);
    return /Runtime stopped: .*384 MB of memory/.test(r.json?.deploy_log ?? "") ? r.json : undefined;
  });
  expect(logs.deploy_log).toMatch(/sandbox memory limit/);
  // The next request starts it again; a run within its limits succeeds.
  const next = await client.threads.create();
  expect(await client.runs.wait(next.thread_id, "agent", { input: { size: "small" } })).toEqual({
    size: "fine",
  });
}, 180_000);
