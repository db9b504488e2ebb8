import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DeployError } from "../errors.ts";
import { type ArtifactManifest, bundleGraphs } from "./bundle.ts";
import { readGraphConfig } from "./graph-config.ts";
import { smokeTestGraphs } from "./smoke.ts";

// One artifact holds every test graph; each test smoke-tests the graphs it names.
const BUILDER = `
import { MessagesAnnotation, StateGraph, START, END } from "@langchain/langgraph";
export const builder = () => new StateGraph(MessagesAnnotation)
  .addNode("first", () => ({}))
  .addNode("second", () => ({}))
  .addEdge(START, "first")
  .addEdge("first", "second")
  .addEdge("second", END);
`;
const SOURCES: Record<string, string> = {
  "src/builder.ts": BUILDER,
  "src/good.ts": `import { builder } from "./builder.ts";
// What a graph prints is never read as a result.
console.log(JSON.stringify({ graph_id: "good", fail: "printed by the graph" }));
export const graph = builder().compile();\n`,
  "src/exits.ts": `process.exit(3);\nexport const graph = 1;\n`,
  "src/uncompiled.ts": `import { builder } from "./builder.ts";\nexport const graph = builder();\n`,
  "src/factory.ts": `import { builder } from "./builder.ts";
export async function make(config: { configurable?: Record<string, unknown> }) {
  if (!config?.configurable) throw new Error("no config given");
  return builder().compile();
}\n`,
  "src/throws.ts": `throw new Error("cannot load the model\\nsecond line");\nexport const graph = 1;\n`,
  "src/notgraph.ts": "export const graph = { hello: 1 };\n",
  "src/auth.ts": `import { Auth } from "@langchain/langgraph-sdk/auth";
export const auth = new Auth().authenticate(() => "someone");\n`,
  "src/slow.ts": `await new Promise((r) => setTimeout(r, 60_000));\nexport const graph = 1;\n`,
  "src/env.ts": `import { MessagesAnnotation, StateGraph, START, END } from "@langchain/langgraph";
const key = process.env.OPENAI_API_KEY;
if (!key) throw new Error("OPENAI_API_KEY is not set");
if (key === "sk-wrong") throw new Error("rejected key " + key);
const label = process.env.GRAPH_LABEL ?? "unlabelled";
const leaked = process.env.AWS_SECRET_ACCESS_KEY === undefined ? "isolated" : "leaked";
export const graph = new StateGraph(MessagesAnnotation)
  .addNode(label, () => ({}))
  .addNode(leaked, () => ({}))
  .addEdge(START, label)
  .addEdge(label, leaked)
  .addEdge(leaked, END)
  .compile();\n`,
};
const GRAPHS: Record<string, string> = {
  good: "./src/good.ts:graph",
  uncompiled: "./src/uncompiled.ts:graph",
  factory: "./src/factory.ts:make",
  throws: "./src/throws.ts:graph",
  notgraph: "./src/notgraph.ts:graph",
  missing: "./src/good.ts:nothere",
  slow: "./src/slow.ts:graph",
  exits: "./src/exits.ts:graph",
  env: "./src/env.ts:graph",
  // Bundled as graphs so a test can name them as the manifest's auth (one auth.path per config).
  authmod: "./src/auth.ts:auth",
};

let tmp: string;
let artifactDir: string;
let full: ArtifactManifest;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "smoke-test-"));
  // Readable like the platform's artifact folders: a root platform's sandbox runs as a uid of its own.
  await chmod(tmp, 0o755);
  const repo = path.join(tmp, "repo");
  for (const [name, text] of Object.entries(SOURCES)) {
    await mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await writeFile(path.join(repo, name), text);
  }
  await writeFile(
    path.join(repo, "langgraph.json"),
    JSON.stringify({ graphs: GRAPHS, env: { GRAPH_LABEL: "labelled" } }),
  );
  const { config, configDir } = await readGraphConfig(repo, "langgraph.json");
  artifactDir = path.join(tmp, "artifact");
  full = await bundleGraphs({ repoDir: repo, configDir, config, outDir: artifactDir, log: () => {} });
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** The artifact's manifest narrowed to some graphs. */
const only = (...ids: string[]): ArtifactManifest => ({
  ...full,
  graphs: Object.fromEntries(ids.map((id) => [id, full.graphs[id]!])),
});
const smoke = (ids: string[], env: Record<string, string> = {}, timeoutMs?: number) =>
  smokeTestGraphs({ artifactDir, manifest: only(...ids), env, timeoutMs });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a DeployError");
    },
    (err) => {
      expect(err).toBeInstanceOf(DeployError);
      return (err as Error).message;
    },
  );

describe("smoke test of bundled graphs", () => {
  it("a compiled graph reports its nodes, without __start__ and __end__", async () => {
    expect(await smoke(["good"])).toEqual([
      { graph_id: "good", export_name: "graph", nodes: ["first", "second"] },
    ]);
  });

  it("an uncompiled StateGraph is compiled", async () => {
    expect((await smoke(["uncompiled"]))[0]!.nodes).toEqual(["first", "second"]);
  });

  it("a factory is called with a config and its graph compiled", async () => {
    expect(await smoke(["factory", "good"])).toEqual([
      { graph_id: "factory", export_name: "make", nodes: ["first", "second"] },
      { graph_id: "good", export_name: "graph", nodes: ["first", "second"] },
    ]);
  });

  it("a graph that throws on import: 'graph <id>: import failed: <first line>'", async () => {
    expect(await failure(smoke(["throws"]))).toBe("graph throws: import failed: cannot load the model");
  });

  it("a failing graph beside one that loads is reported with its reason; the other deploys", async () => {
    expect(await smoke(["good", "throws", "notgraph"])).toEqual([
      { graph_id: "good", export_name: "graph", nodes: ["first", "second"] },
      { graph_id: "throws", export_name: "graph", nodes: [], error: "import failed: cannot load the model" },
      { graph_id: "notgraph", export_name: "graph", nodes: [], error: "not a graph" },
    ]);
  });

  it("a missing export: 'graph <id>: export <name> not found'", async () => {
    expect(await failure(smoke(["missing"]))).toBe("graph missing: export nothere not found");
  });

  it("an export that is no graph: 'graph <id>: not a graph'", async () => {
    expect(await failure(smoke(["notgraph"]))).toBe("graph notgraph: not a graph");
  });

  it("when no graph loads, every failing graph is reported", async () => {
    expect((await failure(smoke(["throws", "notgraph"]))).split("\n")).toEqual([
      "graph throws: import failed: cannot load the model",
      "graph notgraph: not a graph",
    ]);
  });

  it("a graph that hangs times out", async () => {
    const started = Date.now();
    expect(await failure(smoke(["good", "slow"], {}, 1500))).toMatch(/^graph slow: timed out after 1\.5 s/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a graph that ends the process is reported", async () => {
    expect(await failure(smoke(["good", "exits"]))).toBe("graph exits: the graph process exited (code 3)");
  });

  it("deployment secrets and the config's env are the graph's process.env; the platform's env is not", async () => {
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "platform-secret");
    vi.stubEnv("OPENAI_API_KEY", "platform-openai-key");
    expect(await failure(smoke(["env"]))).toBe("graph env: import failed: OPENAI_API_KEY is not set");
    const [info] = await smoke(["env"], { OPENAI_API_KEY: "sk-deployment" });
    expect(info!.nodes).toEqual(["labelled", "isolated"]);
  });

  it("a secret a graph puts into its error is redacted from the message", async () => {
    const message = await failure(smoke(["env"], { OPENAI_API_KEY: "sk-wrong" }));
    expect(message).toBe("graph env: import failed: rejected key [redacted]");
  });
});

describe("smoke test of custom auth (auth.path)", () => {
  const withAuth = (export_name: string, file = "graphs/authmod.mjs"): ArtifactManifest => ({
    ...only("good"),
    auth: { file, export_name },
  });
  it("an Auth export passes", async () => {
    const graphs = await smokeTestGraphs({ artifactDir, manifest: withAuth("auth"), env: {} });
    expect(graphs.map((g) => g.graph_id)).toEqual(["good"]);
  });
  it("an export that is no Auth, or a module that does not load, fails the deploy saying why", async () => {
    expect(await failure(smokeTestGraphs({ artifactDir, manifest: withAuth("nothere"), env: {} }))).toMatch(
      /auth\.path \(graphs\/authmod\.mjs\): export nothere is not an Auth/,
    );
    expect(
      await failure(
        smokeTestGraphs({ artifactDir, manifest: withAuth("graph", "graphs/throws.mjs"), env: {} }),
      ),
    ).toMatch(/auth\.path \(graphs\/throws\.mjs\): import failed: cannot load the model/);
  });
});
