import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 15, item 2: the store API of the reference server over the deployment's own DynamoStore — the store its
// graphs write with `store.put` — through the real @langchain/langgraph-sdk Client.
const FILES = {
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" }, env: {} }),
  "src/graph.mjs": [
    `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";`,
    `const State = Annotation.Root({ user: Annotation(), note: Annotation(), seed: Annotation() });`,
    `export const graph = new StateGraph(State)`,
    `  .addNode("remember", async (s, config) => {`,
    `    await config.store.put(["memories", s.user], "note", { text: s.note });`,
    `    const seed = await config.store.get(["from_api"], "seed");`,
    `    return { seed: seed?.value ?? null };`,
    `  })`,
    `  .addEdge(START, "remember").addEdge("remember", END).compile();`,
    "",
  ].join("\n"),
};

let repo: { dir: string; remove: () => void };
let deploymentId: string;
let client: Client;
let other: { deploymentId: string; client: Client };
const path = (p: string) => `/agents/${deploymentId}${p}`;

beforeAll(async () => {
  repo = gitRepo(FILES);
  [{ deploymentId, client }, other] = await Promise.all([
    deployedClient(facts, repo.dir, "store"),
    deployedClient(facts, repo.dir, "store-other"),
  ]);
}, 240_000);

afterAll(() => repo?.remove());

const keysOf = (items: { namespace: string[]; key: string }[]) =>
  items.map((i) => `${i.namespace.join("/")}:${i.key}`);

describe("store items", () => {
  it("puts, reads, replaces and deletes an item; a missing item reads as null", async () => {
    await client.store.putItem(["crud", "u1"], "prefs", { theme: "dark" });
    const first = await client.store.getItem(["crud", "u1"], "prefs");
    expect(first).toMatchObject({ namespace: ["crud", "u1"], key: "prefs", value: { theme: "dark" } });

    // The wire shape of the reference server: snake_case timestamps (the SDK adds camelCase copies).
    const raw = await call("GET", path("/store/items?namespace=crud.u1&key=prefs"), { headers: auth });
    expect(raw.status).toBe(200);
    expect(Object.keys(raw.json).sort()).toEqual(["created_at", "key", "namespace", "updated_at", "value"]);
    expect(Date.parse(raw.json.created_at)).toBeGreaterThan(Date.now() - 60_000);

    await new Promise((r) => setTimeout(r, 10));
    await client.store.putItem(["crud", "u1"], "prefs", { theme: "light" }, { index: false });
    const second = await client.store.getItem(["crud", "u1"], "prefs");
    expect(second?.value).toEqual({ theme: "light" });
    expect(second?.createdAt).toBe(first?.createdAt);
    expect(Date.parse(second!.updatedAt)).toBeGreaterThan(Date.parse(first!.updatedAt));

    await client.store.deleteItem(["crud", "u1"], "prefs");
    expect(await client.store.getItem(["crud", "u1"], "prefs")).toBeNull();
    // Deleting what is not there is no error.
    await client.store.deleteItem(["crud", "u1"], "prefs");
    expect(await client.store.getItem(["crud", "nobody"], "nothing")).toBeNull();
  });

  it("searches under a namespace prefix with filters, limit and offset", async () => {
    const seed: [string[], string, Record<string, unknown>][] = [
      [["docs"], "a", { kind: "guide", n: 1 }],
      [["docs"], "b", { kind: "ref", n: 5 }],
      [["docs", "py"], "c", { kind: "guide", n: 3 }],
      [["docs", "ts"], "d", { kind: "guide", n: 7 }],
      [["docsx"], "e", { kind: "guide", n: 2 }],
    ];
    for (const [ns, key, value] of seed) await client.store.putItem(ns, key, value);

    expect(keysOf((await client.store.searchItems(["docs"])).items)).toEqual([
      "docs:a",
      "docs:b",
      "docs/py:c",
      "docs/ts:d",
    ]);
    expect(keysOf((await client.store.searchItems(["docs", "py"])).items)).toEqual(["docs/py:c"]);
    expect(keysOf((await client.store.searchItems(["docs"], { filter: { kind: "guide" } })).items)).toEqual([
      "docs:a",
      "docs/py:c",
      "docs/ts:d",
    ]);
    expect(
      keysOf((await client.store.searchItems(["docs"], { filter: { n: { $gte: 3, $lt: 7 } } })).items),
    ).toEqual(["docs:b", "docs/py:c"]);
    expect(keysOf((await client.store.searchItems(["docs"], { limit: 2 })).items)).toEqual([
      "docs:a",
      "docs:b",
    ]);
    expect(keysOf((await client.store.searchItems(["docs"], { limit: 2, offset: 2 })).items)).toEqual([
      "docs/py:c",
      "docs/ts:d",
    ]);
    const found = (await client.store.searchItems(["docsx"])).items;
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ namespace: ["docsx"], key: "e", value: { kind: "guide", n: 2 } });
    expect(typeof found[0].createdAt).toBe("string");
    // Ten by default, as the reference server.
    for (let i = 0; i < 12; i++)
      await client.store.putItem(["many"], `k${String(i).padStart(2, "0")}`, { i });
    expect((await client.store.searchItems(["many"])).items).toHaveLength(10);
    const raw = await call("POST", path("/store/items/search"), {
      headers: auth,
      body: { namespace_prefix: ["many"] },
    });
    expect(raw.json.items).toHaveLength(10);
  });

  it("lists namespaces by prefix, suffix and depth", async () => {
    for (const ns of [
      ["ns", "u1"],
      ["ns", "u1", "memories"],
      ["ns", "u2", "memories"],
      ["ns", "u2", "prefs"],
    ])
      await client.store.putItem(ns, "k", { v: 1 });
    const list = (o: Parameters<Client["store"]["listNamespaces"]>[0]) =>
      client.store.listNamespaces(o).then((r) => r.namespaces);

    expect(await list({ prefix: ["ns"] })).toEqual([
      ["ns", "u1"],
      ["ns", "u1", "memories"],
      ["ns", "u2", "memories"],
      ["ns", "u2", "prefs"],
    ]);
    expect(await list({ prefix: ["ns"], suffix: ["memories"] })).toEqual([
      ["ns", "u1", "memories"],
      ["ns", "u2", "memories"],
    ]);
    expect(await list({ prefix: ["ns", "*", "prefs"] })).toEqual([["ns", "u2", "prefs"]]);
    expect(await list({ prefix: ["ns"], maxDepth: 2 })).toEqual([
      ["ns", "u1"],
      ["ns", "u2"],
    ]);
    expect(await list({ prefix: ["ns"], limit: 2, offset: 1 })).toEqual([
      ["ns", "u1", "memories"],
      ["ns", "u2", "memories"],
    ]);
  });

  it("honours ttl (minutes): expired items are gone from get, search and listings; reads refresh it", async () => {
    const TTL = 0.1; // 6 s
    const t0 = Date.now();
    await client.store.putItem(["ttl", "a"], "k", { v: "a" }, { ttl: TTL });
    await client.store.putItem(["ttl", "b"], "k", { v: "b" }, { ttl: TTL });
    await client.store.putItem(["ttl", "keep"], "k", { v: "keep" });
    expect(keysOf((await client.store.searchItems(["ttl"], { refreshTtl: false })).items)).toEqual([
      "ttl/a:k",
      "ttl/b:k",
      "ttl/keep:k",
    ]);
    // Half way, a read of a refreshes its TTL (the default, as the reference server's stores).
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + 3_000 - Date.now())));
    expect((await client.store.getItem(["ttl", "a"], "k"))?.value).toEqual({ v: "a" });
    // b expires within 7 s of its put (expiries are whole seconds); a, refreshed, lives on.
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + 7_500 - Date.now())));
    expect(await client.store.getItem(["ttl", "b"], "k", { refreshTtl: false })).toBeNull();
    expect((await client.store.getItem(["ttl", "a"], "k", { refreshTtl: false }))?.value).toEqual({ v: "a" });
    expect(keysOf((await client.store.searchItems(["ttl"], { refreshTtl: false })).items)).toEqual([
      "ttl/a:k",
      "ttl/keep:k",
    ]);
    expect((await client.store.listNamespaces({ prefix: ["ttl"] })).namespaces).toEqual([
      ["ttl", "a"],
      ["ttl", "keep"],
    ]);
    // Put again after expiring, b is a new item (a new created_at), and without a ttl it stays.
    await client.store.putItem(["ttl", "b"], "k", { v: "b2" });
    const b2 = await client.store.getItem(["ttl", "b"], "k");
    expect(Date.parse(b2!.createdAt)).toBeGreaterThan(t0 + 7_000);
    await waitFor(
      "a to expire",
      async () => (await client.store.getItem(["ttl", "a"], "k", { refreshTtl: false })) === null,
      15_000,
      500,
    );
    expect(keysOf((await client.store.searchItems(["ttl"])).items)).toEqual(["ttl/b:k", "ttl/keep:k"]);
  }, 60_000);

  it("refuses namespace labels that are empty or hold a dot, bad ttls and semantic queries (422)", async () => {
    const refused = async (method: string, p: string, body?: unknown) => {
      const r = await call(method, path(p), { headers: auth, body });
      expect(r.status, `${method} ${p} ${JSON.stringify(body)}`).toBe(422);
      expect(r.json.detail[0]).toEqual({
        loc: expect.any(Array),
        msg: expect.any(String),
        type: expect.any(String),
      });
      return r.json.detail as { loc: (string | number)[]; msg: string }[];
    };
    const put = (namespace: unknown, extra = {}) =>
      refused("PUT", "/store/items", { namespace, key: "k", value: { v: 1 }, ...extra });
    expect((await put(["a.b"]))[0].loc).toEqual(["body", "namespace", 0]);
    expect((await put(["ok", ""]))[0].loc).toEqual(["body", "namespace", 1]);
    await put([]);
    await put(["a:b"]);
    expect((await put(["ok"], { ttl: 0 }))[0].loc).toEqual(["body", "ttl"]);
    await put(["ok"], { ttl: -1 });
    await refused("PUT", "/store/items", { namespace: ["ok"], key: "k", value: [1, 2] });
    await refused("DELETE", "/store/items", { namespace: ["a.b"], key: "k" });
    expect((await refused("GET", "/store/items?namespace=a..b&key=k"))[0].loc).toEqual([
      "query",
      "namespace",
      1,
    ]);
    await refused("GET", "/store/items?namespace=a");
    await refused("POST", "/store/items/search", { namespace_prefix: ["a.b"] });
    await refused("POST", "/store/namespaces", { prefix: [""] });
    await refused("POST", "/store/namespaces", { suffix: ["x.y"] });
    const query = await refused("POST", "/store/items/search", { namespace_prefix: ["docs"], query: "hi" });
    expect(query[0].loc).toEqual(["body", "query"]);
    expect(query[0].msg).toMatch(/embeddings index/);
    // The SDK refuses a dotted label itself, before any request.
    await expect(client.store.putItem(["a.b"], "k", { v: 1 })).rejects.toThrow(/periods/);
    // Nothing refused was stored.
    expect((await client.store.listNamespaces({ prefix: ["ok"] })).namespaces).toEqual([]);
  });

  it("is the deployment's own: another deployment sees none of its items", async () => {
    await client.store.putItem(["iso"], "k", { owner: "first" });
    expect(await other.client.store.getItem(["iso"], "k")).toBeNull();
    expect((await other.client.store.searchItems([])).items).toEqual([]);
    expect((await other.client.store.listNamespaces()).namespaces).toEqual([]);
    await other.client.store.putItem(["iso"], "k", { owner: "other" });
    expect((await client.store.getItem(["iso"], "k"))?.value).toEqual({ owner: "first" });
    expect((await other.client.store.getItem(["iso"], "k"))?.value).toEqual({ owner: "other" });
  });

  it("is the store the graphs use: what a run writes is read back, and what the API writes a run reads", async () => {
    await client.store.putItem(["from_api"], "seed", { hello: "graph" });
    const thread = await client.threads.create();
    const out = (await client.runs.wait(thread.thread_id, "agent", {
      input: { user: "u42", note: "remember me" },
    })) as { seed: unknown };
    expect(out.seed).toEqual({ hello: "graph" });
    const item = await client.store.getItem(["memories", "u42"], "note");
    expect(item).toMatchObject({
      namespace: ["memories", "u42"],
      key: "note",
      value: { text: "remember me" },
    });
    // Not in the other deployment's store, though it runs the same graph code.
    expect(await other.client.store.getItem(["memories", "u42"], "note")).toBeNull();
  });
});

describe("the OpenAPI documents", () => {
  it("list the store routes: the platform's and the agent server's own", async () => {
    const platform = await call("GET", "/openapi.json");
    const items = platform.json.paths["/agents/{deployment_id}/store/items"];
    expect(Object.keys(items).sort()).toEqual(["delete", "get", "put"]);
    expect(platform.json.paths["/agents/{deployment_id}/store/items/search"].post).toBeDefined();
    expect(platform.json.paths["/agents/{deployment_id}/store/namespaces"].post).toBeDefined();

    const own = await call("GET", path("/openapi.json"));
    expect(own.status).toBe(200);
    expect(Object.keys(own.json.paths["/store/items"]).sort()).toEqual(["delete", "get", "put"]);
    expect(own.json.paths["/store/items/search"].post.requestBody).toBeDefined();
    expect(own.json.paths["/store/namespaces"].post.requestBody).toBeDefined();
    const getParams = own.json.paths["/store/items"].get.parameters.map((p: { name: string }) => p.name);
    expect(getParams.sort()).toEqual(["key", "namespace", "refresh_ttl"]);
  });
});
