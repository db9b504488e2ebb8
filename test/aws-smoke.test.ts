import { afterAll, describe, expect, it } from "vitest";
import { gitRepo } from "../harness/repos.ts";
import { smoke } from "../infra/admin/aws-smoke.ts";
import { base, facts } from "./helpers/cloud.ts";

// The tiny agent an operator points AWS_SMOKE_AGENT_REPO at: one node answering the last message.
const agent = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { echo: "./graph.mjs:graph" } }),
  "graph.mjs": `
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("echo", (s) => ({ messages: [new AIMessage("pong: " + s.messages.at(-1).content)] }))
  .addEdge(START, "echo").addEdge("echo", END).compile();
`,
});
afterAll(() => agent.remove());

// The smoke test the README's AWS guide runs after a first deploy passes against the local cloud, which runs
// what AWS runs: it can fail (a wrong key is refused, every step is asserted), so it is a check worth running there.
describe("npm run aws:smoke", () => {
  it("passes every check against the local cloud", async () => {
    const checks = await smoke({ api: base, apiKey: facts.api_key });
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(checks.map((c) => c.check)).toEqual([
      "health (system group)",
      "server info (platform group)",
      "an unknown key is refused",
      "create a tracing project (tables, key)",
      "trace a run and read it back (ingestion, payloads)",
      "list deployments (control group)",
      "list export destinations (export group)",
      "agent API router authenticates",
      "delete the project (purge task invoked)",
    ]);
  });

  it("with an agent's repository: deploys it, streams a run through the SDK, reads its trace, deletes it", async () => {
    const checks = await smoke({ api: base, apiKey: facts.api_key, agentRepo: agent.dir });
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(checks.slice(-4).map((c) => c.check)).toEqual([
      "deploy an agent from its repository (build, deploy)",
      "stream a run through the LangGraph SDK (router, runtime)",
      "read the run's trace back (trace sink, ingestion)",
      "delete the agent's deployment and its project",
    ]);
    const id = checks[checks.length - 1].detail;
    const gone = await fetch(`${base}/v2/deployments/${id}`, { headers: { "x-api-key": facts.api_key } });
    expect(gone.status).toBe(404);
  });

  it("fails, naming the step, when the key is not the workspace's", async () => {
    const checks = await smoke({
      api: base,
      apiKey: "lsv2_pt_0000000000000000000000000000000_0000000000",
      waitMs: 1000,
    });
    const failed = checks.filter((c) => !c.ok).map((c) => c.check);
    expect(failed).toContain("create a tracing project (tables, key)");
    expect(failed).toContain("list deployments (control group)");
    expect(checks.find((c) => c.check === "health (system group)")?.ok).toBe(true);
  });
});
