import { describe, expect, it } from "vitest";
import "./helpers/cloud.ts";
import { randomUUID } from "node:crypto";
import {
  type BaseStore,
  InMemoryStore,
  InvalidNamespaceError,
  type Item,
} from "@langchain/langgraph-checkpoint";
import { DynamoStore } from "../shared/agent/store/store.ts";
import { HttpError } from "../shared/errors.ts";

// The DynamoDB store against LangGraph's InMemoryStore: the same operations must give the same answers.
const newStore = () => new DynamoStore({ scope: `tenant-${randomUUID()}#deployment` });
const plain = (items: (Item | null)[]) =>
  items.map((i) => (i ? { namespace: i.namespace, key: i.key, value: i.value } : i));

// Inserted in namespace-then-key order, where InMemoryStore's insertion order and DynamoDB's key order agree.
const seed: [string[], string, Record<string, unknown>][] = [
  [["docs"], "a", { kind: "guide", n: 1, tags: ["x"] }],
  [["docs"], "b", { kind: "ref", n: 5 }],
  [["docs"], "c", { kind: "ref", n: 6 }],
  [["docs", "py"], "c", { kind: "guide", n: 3 }],
  [["docs", "ts"], "d", { kind: "guide", n: 7, extra: "x" }],
  [["users", "u1"], "prefs", { theme: "dark", n: 2 }],
  [["users", "u2"], "prefs", { theme: "light", n: 9 }],
  [["users", "u2", "memories"], "m1", { text: "hi", n: 4 }],
];

async function fill(store: BaseStore) {
  for (const [ns, key, value] of seed) await store.put(ns, key, value);
  await store.put(["docs"], "a", { kind: "guide", n: 2, tags: ["y"] });
  await store.delete(["docs"], "b");
}

describe("DynamoStore", () => {
  it("answers like InMemoryStore: get, search with filters and paging, namespace listing", async () => {
    const memory = new InMemoryStore();
    const dynamo = newStore();
    await Promise.all([fill(memory), fill(dynamo)]);
    const both = async (op: (s: BaseStore) => Promise<unknown>) => {
      const [m, d] = await Promise.all([op(memory), op(dynamo)]);
      expect(d).toEqual(m);
      return d;
    };

    for (const [ns, key] of [...seed.map(([n, k]) => [n, k] as const), [["docs"], "missing"] as const])
      await both(async (s) => plain([await s.get([...ns], key)]));

    const filters = [
      undefined,
      { kind: "guide" },
      { kind: "ref" },
      { n: { $gt: 2 } },
      { n: { $gte: 3, $lt: 8 } },
      { n: { $ne: 6 } },
      { n: { $eq: 7 } },
      { kind: { $in: ["ref", "nothing"] } },
      { kind: { $nin: ["ref"] } },
      { theme: "dark" },
      { missing: "field" },
    ];
    const pages = [{}, { limit: 2 }, { limit: 2, offset: 1 }, { limit: 1, offset: 3 }, { offset: 100 }];
    for (const prefix of [[], ["docs"], ["docs", "py"], ["users"], ["users", "u2"], ["nope"]])
      for (const filter of filters)
        for (const page of pages) await both(async (s) => plain(await s.search(prefix, { filter, ...page })));

    const listings = [
      {},
      { prefix: ["users"] },
      { prefix: ["users", "*"] },
      { prefix: ["*", "u2"] },
      { suffix: ["memories"] },
      { suffix: ["*", "py"] },
      { prefix: ["users"], suffix: ["u2"] },
      { maxDepth: 1 },
      { maxDepth: 2 },
      { prefix: ["users"], maxDepth: 2 },
      { limit: 2 },
      { limit: 2, offset: 2 },
      { offset: 10 },
    ];
    for (const options of listings) await both((s) => s.listNamespaces(options));

    // Within one batch, reads see the state before it and the last put of a key wins.
    await both(async (s) =>
      plain(
        (await s.batch([
          { namespace: ["batch"], key: "k", value: { v: 1 } },
          { namespace: ["batch"], key: "k" },
          { namespace: ["batch"], key: "k", value: { v: 2 } },
        ])) as (Item | null)[],
      ),
    );
    await both(async (s) => plain([await s.get(["batch"], "k")]));
  });

  it("keeps createdAt and moves updatedAt when an item is replaced", async () => {
    const store = newStore();
    await store.put(["t"], "k", { v: 1 });
    const first = (await store.get(["t"], "k"))!;
    await new Promise((r) => setTimeout(r, 20));
    await store.put(["t"], "k", { v: 2 });
    const second = (await store.get(["t"], "k"))!;
    expect(second.value).toEqual({ v: 2 });
    expect(second.createdAt).toEqual(first.createdAt);
    expect(second.updatedAt.getTime()).toBeGreaterThan(first.updatedAt.getTime());
  });

  it("sees only its own scope", async () => {
    const a = newStore();
    const b = newStore();
    await a.put(["shared", "ns"], "k", { owner: "a" });
    expect(await b.get(["shared", "ns"], "k")).toBeNull();
    expect(await b.search([])).toEqual([]);
    expect(await b.listNamespaces()).toEqual([]);
    await b.put(["shared", "ns"], "k", { owner: "b" });
    expect((await a.get(["shared", "ns"], "k"))?.value).toEqual({ owner: "a" });
    expect((await a.search(["shared"])).map((i) => i.value)).toEqual([{ owner: "a" }]);
  });

  it("rejects namespace labels that could break its keys, and oversized keys and values", async () => {
    const store = newStore();
    for (const namespace of [["a.b"], ["a:b"], [""], ["ok", "nul\0"], [], [42 as unknown as string]]) {
      await expect(store.batch([{ namespace, key: "k", value: { v: 1 } }])).rejects.toThrow(
        InvalidNamespaceError,
      );
      await expect(store.batch([{ namespace, key: "k" }])).rejects.toThrow(InvalidNamespaceError);
    }
    await expect(store.search(["a.b"])).rejects.toThrow(InvalidNamespaceError);
    await expect(store.put(["ns"], "k".repeat(1100), { v: 1 })).rejects.toThrow(InvalidNamespaceError);
    await expect(store.put(["ns"], "big", { v: "x".repeat(400 * 1024) })).rejects.toThrow(HttpError);
    expect(await store.listNamespaces()).toEqual([]);
  });

  it("lists every namespace when labels sort around the key separators, reading past crowded ones", async () => {
    const memory = new InMemoryStore();
    const store = newStore();
    const namespaces = [["a"], ["a", "-x"], ["a", "/y"], ["a", "z"], ["a-"], ["a", "z", "0"], ["b c"], ["é"]];
    for (const s of [memory, store] as BaseStore[]) {
      await s.batch(namespaces.map((namespace) => ({ namespace, key: "k", value: { v: 1 } })));
      // More items in ["a"] than one listing page holds.
      await s.batch(
        Array.from({ length: 120 }, (_, i) => ({ namespace: ["a"], key: `k${i}`, value: { i } })),
      );
    }
    const sorted = (nss: string[][]) =>
      [...nss].sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
    for (const options of [
      {},
      { prefix: ["a"] },
      { maxDepth: 1 },
      { suffix: ["z"] },
      { prefix: ["a", "*"] },
    ]) {
      const [m, d] = await Promise.all([
        memory.listNamespaces({ ...options, limit: 1000 }),
        store.listNamespaces({ ...options, limit: 1000 }),
      ]);
      expect(sorted(d)).toEqual(sorted(m));
    }
    expect((await store.search(["a"], { limit: 1000 })).length).toBe(121 + 4);
    expect((await store.search(["a-"])).map((i) => i.namespace)).toEqual([["a-"]]);
  });
});
