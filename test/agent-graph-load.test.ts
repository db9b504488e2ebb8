import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { deployRepo, gitRepo } from "../harness/repos.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 15, item 7: a graph that fails to load is reported per graph while the deployment's other graphs serve.
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: {
      good: "./src/good.mjs:graph",
      broken: "./src/broken.mjs:graph",
      leaky: "./src/leaky.mjs:graph",
    },
    env: {},
  }),
  "src/good.mjs": [
    `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";`,
    `const State = Annotation.Root({ text: Annotation() });`,
    `export const graph = new StateGraph(State)`,
    `  .addNode("shout", (s) => ({ text: s.text.toUpperCase() }))`,
    `  .addEdge(START, "shout").addEdge("shout", END).compile();`,
    "",
  ].join("\n"),
  "src/broken.mjs": `throw new Error("the model key is missing");\nexport const graph = 1;\n`,
  // A graph that puts a secret of the deployment into its error.
  "src/leaky.mjs": `throw new Error("key " + process.env.MODEL_KEY + " was refused");\nexport const graph = 1;\n`,
};
const SECRET = "sk-graph-load-secret-4711";

let repo: { dir: string; remove: () => void };
let deploymentId: string;
let revisionId: string;
let client: Client;
const path = (p: string) => `/agents/${deploymentId}${p}`;
const REASON = 'Graph "broken" failed to load: import failed: the model key is missing';

beforeAll(async () => {
  repo = gitRepo(FILES);
  ({ deploymentId, revisionId } = await deployRepo(repo.dir, "graph-load", call, auth, [
    { name: "MODEL_KEY", value: SECRET },
  ]));
  client = agentClient(facts, deploymentId);
}, 240_000);

afterAll(() => repo?.remove());

describe("a graph that fails to load", () => {
  it("does not fail the revision: the deploy log names it and its reason, the other graph compiled", async () => {
    // The log is complete shortly after the status says DEPLOYED.
    const log = await waitFor("the deploy log", async () => {
      const r = await call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs`, {
        headers: auth,
      });
      return String(r.json?.deploy_log ?? "").includes("Deployed:") ? String(r.json.deploy_log) : undefined;
    });
    expect(log).toContain("Graph good compiled: nodes shout");
    expect(log).toContain("Graph broken FAILED to load: import failed: the model key is missing");
  });

  it("the other graph serves: its runs succeed through the SDK", async () => {
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, "good", { input: { text: "hi" } });
    expect(values).toEqual({ text: "HI" });
  });

  it("its assistant exists; its graph and schemas answer 409 naming the load failure", async () => {
    const [assistant] = await client.assistants.search({ graphId: "broken" });
    expect(assistant?.graph_id).toBe("broken");
    for (const p of ["graph", "schemas", "subgraphs"]) {
      const r = await call("GET", path(`/assistants/${assistant!.assistant_id}/${p}`), { headers: auth });
      expect(r.status, p).toBe(409);
      expect(r.json).toEqual({ detail: REASON });
    }
    await expect(client.assistants.getGraph(assistant!.assistant_id)).rejects.toThrow(/409/);
  });

  it("its runs fail with the load failure as the run's error", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "broken", { input: { text: "hi" } });
    const result = await client.runs.join(thread.thread_id, run.run_id);
    expect(result).toMatchObject({ __error__: { error: "GraphLoadFailed", message: REASON } });
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("error");

    const frames = [];
    for await (const part of client.runs.stream(null, "broken", { input: { text: "hi" } })) frames.push(part);
    expect(frames.at(-1)).toMatchObject({
      event: "error",
      data: { error: "GraphLoadFailed", message: REASON },
    });
  });
});

describe("a revision none of whose graphs load", () => {
  it("fails to deploy, every reason in its log", async () => {
    const bad = gitRepo({
      "langgraph.json": JSON.stringify({ graphs: { broken: "./src/broken.mjs:graph" }, env: {} }),
      "src/broken.mjs": FILES["src/broken.mjs"],
    });
    try {
      await expect(deployRepo(bad.dir, "graph-load-none", call, auth)).rejects.toThrow(
        /DEPLOY_FAILED: graph broken: import failed: the model key is missing/,
      );
    } finally {
      bad.remove();
    }
  });
});

describe("a load failure's reason", () => {
  it("never carries a secret of the deployment (redacted in the answer and the deploy log)", async () => {
    const [assistant] = await client.assistants.search({ graphId: "leaky" });
    const r = await call("GET", path(`/assistants/${assistant!.assistant_id}/graph`), { headers: auth });
    expect(r.status).toBe(409);
    expect(r.text).not.toContain(SECRET);
    expect(r.json.detail).toContain("key [redacted] was refused");
    const logs = await call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs`, {
      headers: auth,
    });
    expect(JSON.stringify(logs.json)).not.toContain(SECRET);
  });
});
