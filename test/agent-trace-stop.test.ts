import { afterAll, expect, it } from "vitest";
import { agentClient, deployedClient } from "../harness/agents.ts";
import { platformApi, waitFor } from "../harness/export.ts";
import { callAt } from "../harness/http.ts";
import { type RunningPlatform, startPlatform } from "../harness/platform.ts";
import { deployRepo, gitRepo, graphRepoFiles } from "../harness/repos.ts";
import { sharedDynamoDb } from "./helpers/shared-dynamodb.ts";

// Nothing lost: an agent run's trace waits in its runtime's batch for a timer (AGENT_TRACE_FLUSH_MS). Stopping
// the platform (SIGTERM or Ctrl-C) stops each runtime first, which sends what it holds while the gateway still
// takes it. The timer here is ten minutes, so only the stop can have sent the trace.
//
// Issue 25, on the same platform of its own (one start fewer for the suite): a sandboxed runtime has limits
// (here a 384 MB heap), and a limit that ends it says so — in the error of the run it was executing (once the
// run's retries are spent, each of which ends the same way) and in its revision's deploy log. The runtime is
// started again for the next request.
const SETTINGS = { LOG_LEVEL: "error", AGENT_TRACE_FLUSH_MS: "600000", AGENT_RUNTIME_MEMORY_MB: "384" };
let platform: RunningPlatform | undefined;
const repo = gitRepo(graphRepoFiles(["first", "second"]));
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
const hogRepo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
  "src/graph.mjs": GRAPH,
});
afterAll(async () => {
  await platform?.stop();
  repo.remove();
  hogRepo.remove();
});

it("stopping the platform sends the traces its runtimes still hold: after a restart the run's trace is there", async () => {
  platform = await startPlatform(SETTINGS, { sharedDynamoDb: sharedDynamoDb() });
  const { deploymentId, client } = await deployedClient(platform.facts, repo.dir, "trace-stop");
  const thread = await client.threads.create();
  const values = await client.runs.wait(thread.thread_id, "agent", { input: { text: "go" } });
  expect(values).toEqual({ text: "go>first>second" });
  const [run] = await client.runs.list(thread.thread_id);
  let api = platformApi(platform);
  const projectId = (await api("GET", `/v2/deployments/${deploymentId}`)).json.tracing_project_id as string;
  expect(projectId).toEqual(expect.any(String));
  // Still in the runtime's batch: the timer has not fired.
  expect((await api("POST", "/api/v1/runs/query", { trace: run.run_id, limit: 100 })).json.runs).toEqual([]);

  platform = await platform.restart();
  api = platformApi(platform);
  const names = await waitFor("the run's trace", async () => {
    const runs = (await api("POST", "/api/v1/runs/query", { trace: run.run_id, limit: 100 })).json.runs as {
      name: string;
      end_time: string | null;
    }[];
    return runs.length === 3 && runs.every((r) => r.end_time) ? runs.map((r) => r.name).sort() : undefined;
  });
  expect(names).toEqual(["agent", "first", "second"]);
}, 240_000);

it("a runtime that outgrows its memory is stopped; the run's error and the deploy log say which limit", async () => {
  if (!platform) throw new Error("the platform of the test above did not start");
  const headers = { "X-Api-Key": platform.facts.api_key, "X-Tenant-Id": platform.facts.tenant_id };
  const { deploymentId, revisionId } = await deployRepo(
    hogRepo.dir,
    "limits",
    callAt(platform.base),
    headers,
  );
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
