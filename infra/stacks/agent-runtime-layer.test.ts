import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitPrelude } from "../../shared/agent/runtime/lambda-protocol.ts";
import { bundleGraphs } from "../../shared/build/bundle.ts";
import { readGraphConfig } from "../../shared/build/graph-config.ts";
import { bundleRuntime } from "../local/runtime-bundle.ts";
import { runtimeLayerDir } from "./agent-runtimes.ts";

// A deployment's runtime function in AWS, as the deploy step and the router call it: the platform's runtime
// layer (the very folder the CDK app deploys) serving a revision's bundles from the function's code folder.
const GRAPH = `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ n: Annotation() });
export const graph = new StateGraph(State).addNode("step", (s) => ({ n: 1 })).addNode("more", () => ({}))
  .addEdge(START, "step").addEdge("step", "more").addEdge("more", END).compile();
`;
let tmp: string;
let layer: string;
let env: Record<string, string>;

/** Invokes the layer's handler in a Node process of its own (as Lambda would), the answer's bytes back. */
function invoke(event: unknown): Buffer {
  const script = `
    const { handler } = await import(${JSON.stringify(pathToFileURL(path.join(layer, "nodejs", "agent-runtime.mjs")).href)});
    const chunks = [];
    await handler(${JSON.stringify(event)}, { write: (c) => chunks.push(Buffer.from(c)), end() {}, on() {} });
    process.stdout.write(Buffer.concat(chunks).toString("base64"));
    process.exit(0);`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { env, timeout: 30_000 });
  return Buffer.from(out.toString(), "base64");
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "runtime-fn-"));
  const repo = path.join(tmp, "repo");
  await mkdir(path.join(repo, "src"), { recursive: true });
  await writeFile(path.join(repo, "src/graph.mjs"), GRAPH);
  await writeFile(
    path.join(repo, "langgraph.json"),
    JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
  );
  const { config, configDir } = await readGraphConfig(repo, "langgraph.json");
  const code = path.join(tmp, "code");
  await bundleGraphs({ repoDir: repo, configDir, config, outDir: code, log: () => {} });
  layer = runtimeLayerDir();
  // What the deploy step sets on the function (runtimeEnvironment), and Lambda's code folder.
  env = {
    PATH: process.env.PATH ?? "",
    LAMBDA_TASK_ROOT: code,
    AGENT_RUNTIME_CONFIG: JSON.stringify({
      tenant_id: "t",
      deployment_id: "d",
      revision_id: "r",
      graphs: [{ graph_id: "agent", export_name: "graph", nodes: [] }],
      tracing_project_id: null,
    }),
  };
}, 60_000);
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

// A test under functions/ that imported the CDK once put aws-cdk-lib (64 MB) into every runtime through the
// loaders' import patterns (now static module maps), and a runtime's start took 1.5 s longer. The runtime's
// bundles stay small: the layer here, the local runtime below (infra/stacks/bundle-quotas.test.ts budgets them all).
const MAX_RUNTIME_BUNDLE_BYTES = 20 * 1024 * 1024;

describe("the runtime's bundles", () => {
  it("the layer's is under 20 MB and holds no CDK", () => {
    const file = path.join(layer, "nodejs", "agent-runtime.mjs");
    expect(statSync(file).size).toBeLessThan(MAX_RUNTIME_BUNDLE_BYTES);
    expect(readFileSync(file, "utf8")).not.toContain("aws-cdk-lib");
  });

  it("the local runtime's is under 20 MB", async () => {
    const { file } = await bundleRuntime(path.join(tmp, "local-runtime"));
    expect(statSync(file).size).toBeLessThan(MAX_RUNTIME_BUNDLE_BYTES);
  }, 60_000);
});

describe("the runtime function", () => {
  it("answers the deploy step's health check with each graph's nodes, prelude first", async () => {
    const split = splitPrelude(invoke({ kind: "health" }));
    expect(split?.prelude.statusCode).toBe(200);
    expect(JSON.parse(split!.rest.toString())).toEqual([{ graph_id: "agent", nodes: ["step", "more"] }]);
  });

  it("serves only the agent-server routes: anything else the router might pass is a 404", async () => {
    const event = { routeKey: "GET /v2/deployments", headers: {}, requestContext: {} };
    const split = splitPrelude(invoke({ kind: "http", tenant_id: "t", event }));
    expect(split?.prelude.statusCode).toBe(404);
  });
});
