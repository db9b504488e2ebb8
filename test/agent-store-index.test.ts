import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { deployRepo, gitRepo } from "../harness/repos.ts";
import { sweepExpiredThreads } from "../shared/agent/cleanup/thread-ttl.ts";
import { threads } from "../shared/records/agent.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 15, item 6: langgraph.json `checkpointer.ttl`, `store.ttl` and `store.index` (semantic search with the
// repository's own embeddings), through the real @langchain/langgraph-sdk Client.
const THREAD_TTL = 0.1; // minutes: 6 s
const STORE_TTL = 0.1; // minutes: 6 s

// Deterministic embeddings: how often a text says cat, dog and car.
const EMBEDDINGS = [
  "const count = (t, w) => t.toLowerCase().split(w).length - 1;",
  `const vector = (t) => [count(t, "cat"), count(t, "dog"), count(t, "car")];`,
  "export const embeddings = {",
  "  embedDocuments: async (texts) => texts.map(vector),",
  "  embedQuery: async (text) => vector(text),",
  "};",
  "",
].join("\n");

const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph" },
    env: {},
    checkpointer: { ttl: { strategy: "delete", default_ttl: THREAD_TTL, sweep_interval_minutes: 1 } },
    store: {
      ttl: { default_ttl: STORE_TTL, refresh_on_read: false },
      index: { embed: "./src/embeddings.mjs:embeddings", dims: 3, fields: ["text"] },
    },
  }),
  "src/embeddings.mjs": EMBEDDINGS,
  "src/graph.mjs": [
    `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";`,
    `const State = Annotation.Root({ notes: Annotation(), query: Annotation(), found: Annotation() });`,
    `export const graph = new StateGraph(State)`,
    `  .addNode("recall", async (s, config) => {`,
    `    for (const [key, text] of Object.entries(s.notes)) await config.store.put(["notes"], key, { text });`,
    `    const hits = await config.store.search(["notes"], { query: s.query, limit: 2 });`,
    `    return { found: hits.map((h) => [h.key, h.score]) };`,
    `  })`,
    `  .addEdge(START, "recall").addEdge("recall", END).compile();`,
    "",
  ].join("\n"),
};

let repo: { dir: string; remove: () => void };
let deploymentId: string;
let client: Client;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  repo = gitRepo(FILES);
  ({ deploymentId, client } = await deployedClient(facts, repo.dir, "store-index"));
  await client.assistants.search(); // the runtime starts: the tests' timings count from here
}, 240_000);

afterAll(() => repo?.remove());

describe("store.index: semantic search", () => {
  it("a graph's store.put embeds its items; store.search with a query ranks them with a score", async () => {
    const out = await client.runs.wait(null, "agent", {
      input: { notes: { a: "a car and a car", b: "my dog", c: "cat and dog" }, query: "dog" },
    });
    const found = (out as { found: [string, number][] }).found;
    expect(found.map(([k]) => k)).toEqual(["b", "c"]);
    expect(found[0]![1]).toBeCloseTo(1);
    expect(found[1]![1]).toBeCloseTo(Math.SQRT1_2);
  });

  it("PUT /store/items embeds store.index.fields; index false is not embedded; search ranks and scores", async () => {
    const put = (key: string, value: Record<string, unknown>, index?: false | string[]) =>
      client.store.putItem(["pets"], key, value, { ttl: null, ...(index === undefined ? {} : { index }) });
    await put("cat", { text: "cat", title: "dog" });
    await put("dog", { text: "dog dog" });
    await put("mixed", { text: "cat dog" });
    await put("hidden", { text: "dog" }, false);
    await put("titled", { text: "car", title: "dog" }, ["title"]);
    const { items } = await client.store.searchItems(["pets"], { query: "dog", limit: 10 });
    expect(items.map((i) => i.key)).toEqual(["dog", "titled", "mixed", "cat", "hidden"]);
    expect(items[0]!.score).toBeCloseTo(1);
    expect(items[2]!.score).toBeCloseTo(Math.SQRT1_2);
    expect(items[3]!.score).toBe(0);
    expect(items[4]!.score).toBeUndefined();
    // Filters, limit and offset apply around the ranking.
    const page = await client.store.searchItems(["pets"], { query: "dog", limit: 2, offset: 1 });
    expect(page.items.map((i) => i.key)).toEqual(["titled", "mixed"]);
    const filtered = await client.store.searchItems(["pets"], { query: "cat", filter: { title: "dog" } });
    expect(filtered.items.map((i) => i.key)).toEqual(["cat", "titled"]);
    // Without a query: key order, no score.
    const plain = await client.store.searchItems(["pets"], { limit: 2 });
    expect(plain.items.map((i) => [i.key, i.score])).toEqual([
      ["cat", undefined],
      ["dog", undefined],
    ]);
  });
});

// The expiry tests mostly wait, each on items or threads of its own: they wait together.
describe.concurrent("store.ttl and checkpointer.ttl", () => {
  it("an item put without a ttl lives default_ttl minutes; reads do not refresh it (refresh_on_read false)", async () => {
    await client.store.putItem(["ttl"], "forever", { text: "x" }, { ttl: null });
    await client.store.putItem(["ttl"], "own", { text: "x" }, { ttl: 10 });
    const putStart = Date.now();
    await client.store.putItem(["ttl"], "default", { text: "x" });
    const putEnd = Date.now();
    // Read about every second for 4 s; a refreshing read would move the expiry to ≥ 6 s after it. Reads stop
    // a second before the earliest expiry (6 s after the put was sent), so a loaded machine cannot make one late.
    while (Date.now() - putStart < 4000) {
      await sleep(1000);
      if (Date.now() - putStart > 5000) break;
      expect(await client.store.getItem(["ttl"], "default")).not.toBeNull();
      await client.store.searchItems(["ttl"]);
    }
    // Expiries are whole seconds, rounded up: gone 7 s after the put answered; a read that refreshed would
    // keep it until at least 6 s after that read.
    await sleep(Math.max(0, putEnd + 7500 - Date.now()));
    expect(await client.store.getItem(["ttl"], "default")).toBeNull();
    expect(await client.store.getItem(["ttl"], "forever")).not.toBeNull();
    expect(await client.store.getItem(["ttl"], "own")).not.toBeNull();
  });

  it("refresh_ttl on a read still refreshes when asked", async () => {
    await client.store.putItem(["ttl2"], "asked", { text: "x" });
    const putEnd = Date.now();
    // Read with a refresh 3 s after the put (3 s before its expiry): the expiry moves to ≥ 6 s after that read.
    await sleep(3000);
    expect(await client.store.getItem(["ttl2"], "asked", { refreshTtl: true })).not.toBeNull();
    // Unrefreshed it would be gone 7 s after the put answered (whole seconds, rounded up).
    await sleep(Math.max(0, putEnd + 7500 - Date.now()));
    expect(await client.store.getItem(["ttl2"], "asked")).not.toBeNull();
  });

  it("a thread created without a ttl gets default_ttl; its own ttl wins; the sweep deletes it when it runs out", async () => {
    const scope = `${facts.tenant_id}#${deploymentId}`;
    const defaulted = await client.threads.create();
    const own = await client.threads.create({ ttl: 60 });
    const record = (id: string) => threads.get({ scope, thread: id });
    expect((await record(defaulted.thread_id))?.ttl_minutes).toBe(THREAD_TTL);
    expect((await record(own.thread_id))?.ttl_minutes).toBe(60);
    await sleep(THREAD_TTL * 60_000 + 500);
    await sweepExpiredThreads();
    await expect(client.threads.get(defaulted.thread_id)).rejects.toMatchObject({ status: 404 });
    expect((await client.threads.get(own.thread_id)).thread_id).toBe(own.thread_id);
  });
});

describe("without store.index", () => {
  it("a provider string whose package the repository does not install fails the build saying why", async () => {
    const bad = gitRepo({
      ...FILES,
      "langgraph.json": JSON.stringify({
        graphs: { agent: "./src/graph.mjs:graph" },
        store: { index: { embed: "openai:text-embedding-3-small", dims: 1536 } },
      }),
    });
    try {
      await expect(deployRepo(bad.dir, "store-index-provider", call, auth)).rejects.toThrow(
        /BUILD_FAILED: .*store\.index\.embed "openai:text-embedding-3-small" needs @langchain\/openai/,
      );
    } finally {
      bad.remove();
    }
  });

  it("a deployment without store.index still refuses a search query with 422", async () => {
    const plain = gitRepo({
      ...FILES,
      "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
    });
    try {
      const other = await deployedClient(facts, plain.dir, "store-no-index");
      const r = await call("POST", `/agents/${other.deploymentId}/store/items/search`, {
        headers: auth,
        body: { namespace_prefix: ["pets"], query: "dog" },
      });
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.json)).toMatch(/store\.index/);
    } finally {
      plain.remove();
    }
  }, 120_000);
});
