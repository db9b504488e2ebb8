import { GetFunctionCommand } from "@aws-sdk/client-lambda";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { lambdaControl } from "../shared/aws/clients.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 35: a deployment whose langgraph.json says node_version 24 is a nodejs24.x function (lambda-host.ts), and the
// local Lambda service runs it on Node.js 24, as Lambda runs that runtime (shared/containment/sandbox-node.ts).
const GRAPH = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ node: Annotation() });
export const graph = new StateGraph(State)
  .addNode("which", async () => ({ node: process.version }))
  .addEdge(START, "which").compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({ node_version: "24", graphs: { agent: "./src/graph.mjs:graph" } }),
  "src/graph.mjs": GRAPH,
});
let client: Client;
let deploymentId: string;

beforeAll(async () => {
  ({ client, deploymentId } = await deployedClient(facts, repo.dir, "node-24"));
}, 180_000);
afterAll(() => repo.remove());

describe("node_version 24", () => {
  it("is a nodejs24.x function whose graphs run on Node.js 24", async () => {
    const d = (await call("GET", `/v2/deployments/${deploymentId}`, { headers: auth })).json;
    expect(d.id).toBe(deploymentId);
    const live = await lambdaControl().send(
      new GetFunctionCommand({ FunctionName: `agent-rt-${deploymentId}`, Qualifier: "1" }),
    );
    expect(live.Configuration?.Runtime).toBe("nodejs24.x");
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "agent", { input: {} })) as { node?: string };
    expect(values.node).toMatch(/^v24\./);
  });
});
