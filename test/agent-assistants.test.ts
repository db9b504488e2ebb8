import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { newWorkspace } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { GRAPH_NAMESPACE } from "../shared/agent/assistants/assistants.ts";
import { uuidv5 } from "../shared/ids.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 6, assistants and system: the real @langchain/langgraph-sdk Client against a deployed graph repo.
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph", typed: "./src/typed.mjs:graph" },
    env: {},
  }),
  "src/graph.mjs": [
    `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";`,
    `const State = Annotation.Root({ text: Annotation() });`,
    `const inner = new StateGraph(State).addNode("shout", (s) => ({ text: s.text + "!" }))`,
    `  .addNode("echo", (s) => ({ text: s.text + s.text }))`,
    `  .addEdge(START, "shout").addEdge("shout", "echo").addEdge("echo", END).compile();`,
    `export const graph = new StateGraph(State).addNode("greet", (s) => ({ text: "hi " + s.text }))`,
    `  .addNode("inner", inner).addEdge(START, "greet").addEdge("greet", "inner").addEdge("inner", END).compile();`,
    "",
  ].join("\n"),
  "src/typed.mjs": [
    `import { z } from "zod";`,
    `import { END, START, StateGraph } from "@langchain/langgraph";`,
    `const State = z.object({ text: z.string(), count: z.number().optional() });`,
    `export const graph = new StateGraph(State).addNode("step", (s) => ({ text: s.text + "." }))`,
    `  .addEdge(START, "step").addEdge("step", END).compile();`,
    "",
  ].join("\n"),
};

let repo: { dir: string; remove: () => void };
let deploymentId: string;
let client: Client;
const AGENT_ID = "fe096781-5601-53d2-b2f6-0d3403f7e9ca";

beforeAll(async () => {
  repo = gitRepo(FILES);
  ({ deploymentId, client } = await deployedClient(facts, repo.dir, "assistants"));
}, 150_000);

afterAll(() => repo?.remove());

describe("default assistants", () => {
  it("each graph has one whose id is the UUIDv5 of the graph id, metadata created_by system", async () => {
    expect(uuidv5("agent", GRAPH_NAMESPACE)).toBe(AGENT_ID);
    const found = await client.assistants.search({ metadata: { created_by: "system" } });
    const byGraph = Object.fromEntries(found.map((a) => [a.graph_id, a]));
    expect(Object.keys(byGraph).sort()).toEqual(["agent", "typed"]);
    expect(byGraph.agent).toMatchObject({
      assistant_id: AGENT_ID,
      graph_id: "agent",
      name: "agent",
      version: 1,
      metadata: { created_by: "system" },
      config: {},
    });
    expect(byGraph.typed.assistant_id).toBe(uuidv5("typed", GRAPH_NAMESPACE));
  });

  it("get by id answers the default assistant", async () => {
    const a = await client.assistants.get(AGENT_ID);
    expect(a).toMatchObject({ assistant_id: AGENT_ID, graph_id: "agent" });
    expect(typeof a.created_at).toBe("string");
    expect(typeof a.updated_at).toBe("string");
  });
});

describe("create, update, versions, latest, delete", () => {
  it("an assistant goes through its lifecycle", async () => {
    const created = await client.assistants.create({
      graphId: "agent",
      name: "Helper",
      description: "helps",
      config: { configurable: { tone: "dry" } },
      metadata: { team: "a", tier: 1 },
    });
    expect(created).toMatchObject({ graph_id: "agent", name: "Helper", version: 1, metadata: { team: "a" } });
    const id = created.assistant_id;

    const updated = await client.assistants.update(id, { metadata: { tier: 2 }, name: "Helper 2" });
    expect(updated).toMatchObject({
      assistant_id: id,
      version: 2,
      name: "Helper 2",
      metadata: { team: "a", tier: 2 },
    });
    expect(updated.config).toEqual({ configurable: { tone: "dry" } });

    const versions = await client.assistants.getVersions(id);
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    expect(versions[1]).toMatchObject({ name: "Helper", metadata: { tier: 1 } });

    const back = await client.assistants.setLatest(id, 1);
    expect(back).toMatchObject({ assistant_id: id, version: 1, name: "Helper", metadata: { tier: 1 } });
    expect((await client.assistants.get(id)).version).toBe(1);

    // A later update builds on the highest version, not on the current one.
    expect((await client.assistants.update(id, { name: "Helper 3" })).version).toBe(3);

    expect(await client.assistants.count({ graphId: "agent", metadata: { team: "a" } })).toBe(1);
    await client.assistants.delete(id);
    await expect(client.assistants.get(id)).rejects.toMatchObject({ status: 404 });
    expect(await client.assistants.count({ metadata: { team: "a" } })).toBe(0);
  });

  it("create with an existing id: raise → 409, do_nothing → the existing one", async () => {
    const assistantId = crypto.randomUUID();
    await client.assistants.create({ graphId: "typed", assistantId, name: "first" });
    await expect(
      client.assistants.create({ graphId: "typed", assistantId, name: "again" }),
    ).rejects.toMatchObject({
      status: 409,
    });
    const kept = await client.assistants.create({
      graphId: "typed",
      assistantId,
      name: "again",
      ifExists: "do_nothing",
    });
    expect(kept).toMatchObject({ assistant_id: assistantId, name: "first" });
  });

  it("search filters by graph_id, name and metadata, sorts, pages and selects", async () => {
    const tag = crypto.randomUUID();
    for (const name of ["alpha", "beta", "gamma"])
      await client.assistants.create({ graphId: "typed", name: `${name}-${tag}`, metadata: { tag } });
    const asc = await client.assistants.search({ metadata: { tag }, sortBy: "name", sortOrder: "asc" });
    expect(asc.map((a) => a.name)).toEqual([`alpha-${tag}`, `beta-${tag}`, `gamma-${tag}`]);
    const page = await client.assistants.search({
      metadata: { tag },
      sortBy: "name",
      sortOrder: "desc",
      limit: 2,
      offset: 1,
      includePagination: true,
    });
    expect(page.assistants.map((a) => a.name)).toEqual([`beta-${tag}`, `alpha-${tag}`]);
    expect(page.next).toBeNull();
    const first = await client.assistants.search({ metadata: { tag }, limit: 1, includePagination: true });
    expect(first.next).toBe("1");
    expect(await client.assistants.search({ name: `BETA-${tag}`, graphId: "typed" })).toHaveLength(1);
    expect(await client.assistants.search({ name: tag, graphId: "agent" })).toHaveLength(0);
    const selected = await client.assistants.search({ metadata: { tag }, select: ["assistant_id", "name"] });
    expect(Object.keys(selected[0]).sort()).toEqual(["assistant_id", "name"]);
    expect(await client.assistants.count({ metadata: { tag } })).toBe(3);
  });
});

describe("graph, schemas and subgraphs", () => {
  it("getGraph draws nodes and edges; xray shows the subgraph's nodes", async () => {
    const g = await client.assistants.getGraph(AGENT_ID);
    const ids = g.nodes.map((n) => n.id);
    expect(ids).toEqual(expect.arrayContaining(["__start__", "greet", "inner", "__end__"]));
    expect(g.edges).toContainEqual(expect.objectContaining({ source: "__start__", target: "greet" }));
    const x = await client.assistants.getGraph(AGENT_ID, { xray: true });
    expect(x.nodes.map((n) => String(n.id))).toEqual(expect.arrayContaining(["inner:shout", "inner:echo"]));
  });

  it("getSchemas: zod state gives typed schemas; Annotation state gives its channel names", async () => {
    const typed = await client.assistants.getSchemas(uuidv5("typed", GRAPH_NAMESPACE));
    expect(typed.graph_id).toBe("typed");
    expect(typed.state_schema).toMatchObject({
      type: "object",
      properties: { text: { type: "string" }, count: { type: "number" } },
      required: ["text"],
    });
    expect(typed.input_schema).toMatchObject({ properties: { text: { type: "string" } } });
    expect((typed.input_schema as { required?: string[] }).required).toBeUndefined();
    expect(typed.output_schema).toMatchObject({ properties: { text: { type: "string" } } });
    const agent = await client.assistants.getSchemas(AGENT_ID);
    // With $schema, as the reference's schemas (its API test checks state_schema and config_schema for it).
    expect(agent.state_schema).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { text: {} },
    });
    expect(agent.config_schema).toBeNull();
  });

  it("a thread's tasks carry their result (null until done) and a subgraph task its checkpoint namespace", async () => {
    const t = await client.threads.create();
    await client.runs.wait(t.thread_id, AGENT_ID, { input: { text: "x" }, interruptBefore: ["inner"] });
    const s = await client.threads.getState(t.thread_id);
    expect(s.next).toEqual(["inner"]);
    expect(s.tasks).toEqual([
      expect.objectContaining({
        name: "inner",
        result: null,
        checkpoint: expect.objectContaining({
          thread_id: t.thread_id,
          checkpoint_ns: `inner:${s.tasks[0]?.id}`,
        }),
      }),
    ]);
    // With subgraphs, the task holds the subgraph's state (nested as the reference nests it) instead.
    const deep = await client.threads.getState(t.thread_id, undefined, { subgraphs: true });
    expect(deep.tasks[0]).toMatchObject({ name: "inner", checkpoint: null, result: null });
    expect(Object.keys((deep.tasks[0] as { state: object }).state).sort()).toEqual([
      "checkpoint",
      "created_at",
      "metadata",
      "next",
      "parent_checkpoint",
      "tasks",
      "values",
    ]);
    // In the history, the step that ran greet shows what it wrote.
    const history = await client.threads.getHistory(t.thread_id);
    const greet = history.flatMap((h) => h.tasks).find((task) => task.name === "greet");
    expect(greet).toMatchObject({ result: { text: "hi x" }, checkpoint: null });
  });

  it("getSubgraphs lists the nested graph by namespace", async () => {
    const subs = await client.assistants.getSubgraphs(AGENT_ID);
    expect(Object.keys(subs)).toEqual(["inner"]);
    // Each namespace's schemas keyed as the LangGraph.js server keys them (its API test reads `state`).
    expect(subs.inner as unknown).toEqual({
      state: expect.objectContaining({ type: "object" }),
      input: expect.objectContaining({ type: "object" }),
      output: expect.objectContaining({ type: "object" }),
      config: null,
    });
    expect(Object.keys(await client.assistants.getSubgraphs(AGENT_ID, { namespace: "inner" }))).toEqual([
      "inner",
    ]);
    expect(await client.assistants.getSubgraphs(AGENT_ID, { namespace: "nope" })).toEqual({});
  });
});

describe("errors", () => {
  it("another workspace's deployment id is a 404", async () => {
    const other = await newWorkspace();
    const r = await call("POST", `/agents/${deploymentId}/assistants/search`, {
      headers: other.headers,
      body: {},
    });
    expect(r.status).toBe(404);
    const c = new Client({ apiUrl: `${base}/agents/${deploymentId}`, apiKey: other.headers["X-Api-Key"] });
    await expect(c.assistants.get(AGENT_ID)).rejects.toMatchObject({ status: 404 });
  });

  it("unknown assistants and graphs are 404", async () => {
    await expect(client.assistants.get(crypto.randomUUID())).rejects.toMatchObject({ status: 404 });
    await expect(client.assistants.update(crypto.randomUUID(), { name: "x" })).rejects.toMatchObject({
      status: 404,
    });
    await expect(client.assistants.delete(crypto.randomUUID())).rejects.toMatchObject({ status: 404 });
    await expect(client.assistants.setLatest(AGENT_ID, 99)).rejects.toMatchObject({ status: 404 });
    await expect(client.assistants.create({ graphId: "nope" })).rejects.toMatchObject({ status: 404 });
    const unknownDeployment = await call("POST", `/agents/${crypto.randomUUID()}/assistants/count`, {
      headers: auth,
      body: {},
    });
    expect(unknownDeployment.status).toBe(404);
  });

  it("bad bodies are 422 with HTTPValidationError", async () => {
    const path = `/agents/${deploymentId}/assistants`;
    for (const [p, body] of [
      [path, {}],
      [path, { graph_id: "agent", if_exists: "maybe" }],
      [path, { graph_id: "agent", assistant_id: "not-a-uuid" }],
      [`${path}/search`, { limit: 0 }],
      [`${path}/search`, { sort_by: "color" }],
      [`${path}/${AGENT_ID}/latest`, { version: "one" }],
    ] as const) {
      const r = await call("POST", p, { headers: auth, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail[0]).toMatchObject({ loc: expect.any(Array), msg: expect.any(String) });
    }
  });

  it("the API key is required", async () => {
    const r = await call("POST", `/agents/${deploymentId}/assistants/search`, { body: {} });
    expect(r.status).toBe(401);
  });
});

describe("system", () => {
  it("GET /info answers version and flags", async () => {
    const r = await call("GET", `/agents/${deploymentId}/info`, { headers: auth });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ version: expect.any(String), flags: { assistants: true, crons: true } });
  });

  it("GET /openapi.json documents the agent routes relative to the deployment", async () => {
    const r = await call("GET", `/agents/${deploymentId}/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.json.servers).toEqual([{ url: `/agents/${deploymentId}` }]);
    expect(Object.keys(r.json.paths)).toEqual(expect.arrayContaining(["/ok", "/info", "/assistants/search"]));
    expect(Object.keys(r.json.paths).some((p) => p.startsWith("/v2") || p.startsWith("/agents"))).toBe(false);
    const params = r.json.paths["/assistants/{assistant_id}"].get.parameters.map(
      (p: { name: string }) => p.name,
    );
    expect(params).toEqual(["assistant_id"]);
  });

  it("GET /docs is a self-contained HTML page", async () => {
    const r = await call("GET", `/agents/${deploymentId}/docs`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.text).toContain("openapi.json");
    expect(r.text).not.toMatch(/<script[^>]+src=/);
  });
});
