import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { queryAll } from "../shared/aws/ddb.ts";
import { config as platformConfig } from "../shared/config.ts";
import "./helpers/cloud.ts";
import { randomUUID } from "node:crypto";
import { HeadObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import {
  type CheckpointTuple,
  ERROR,
  emptyCheckpoint,
  INTERRUPT,
  uuid6,
} from "@langchain/langgraph-checkpoint";
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { refsOf } from "../shared/agent/checkpoint/blobs.ts";
import { DynamoCheckpointSaver } from "../shared/agent/checkpoint/checkpointer.ts";
import { s3 } from "../shared/aws/clients.ts";
import type { Item } from "../shared/aws/ddb.ts";
import { checkpointPk } from "../shared/records/agent.ts";

const toArray = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

// The suite registers its tests through jest-style globals; vitest's own functions stand in for them.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });

// Every checkpointer the suite creates gets a scope of its own: isolated state on the shared table.
const initializer = {
  checkpointerName: "DynamoCheckpointSaver",
  createCheckpointer: () => new DynamoCheckpointSaver({ scope: `spec-${randomUUID()}` }),
};

describe("LangGraph checkpoint validation suite", () => {
  validate(initializer);
  deltaChannelHistoryTests(initializer);
});

// Our own rules, on top of the suite.
const newSaver = (scope = `tenant-${randomUUID()}#deployment`, inlineValueBytes?: number) =>
  new DynamoCheckpointSaver({ scope, inlineValueBytes });
/** A saver that keeps every channel value in an item of its own (the layout large values get). */
const itemSaver = () => newSaver(undefined, 0);
const cfg = (thread_id: string, checkpoint_ns = "") => ({ configurable: { thread_id, checkpoint_ns } });
const rows = (saver: DynamoCheckpointSaver, thread: string) =>
  queryAll("checkpoints", {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": checkpointPk(saver.scope, thread) },
    ConsistentRead: true,
  });
const exists = async (key: string) =>
  s3()
    .send(new HeadObjectCommand({ Bucket: platformConfig.checkpointBucket, Key: key }))
    .then(
      () => true,
      () => false,
    );

/** Puts a checkpoint after `parent` whose channels in `values` are new; returns its config. */
async function step(
  saver: DynamoCheckpointSaver,
  parent: RunnableConfig,
  values: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
) {
  const prev = parent.configurable?.checkpoint_id ? await saver.get(parent) : undefined;
  const versions = { ...(prev?.channel_versions ?? {}) } as Record<string, number>;
  for (const ch of Object.keys(values)) versions[ch] = ((versions[ch] as number) ?? 0) + 1;
  const checkpoint = {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: values,
    channel_versions: versions,
  };
  const newVersions = Object.fromEntries(Object.keys(values).map((ch) => [ch, versions[ch]]));
  return saver.put(parent, checkpoint, { source: "loop", step: 0, parents: {}, ...metadata }, newVersions);
}

describe("DynamoCheckpointSaver", () => {
  it("keeps deployments apart: another scope sees none of a thread", async () => {
    const a = newSaver("tenant#a");
    const b = newSaver("tenant#a#T#x");
    const thread = randomUUID();
    await step(a, cfg(thread), { v: "a" });
    // Ids that contain the separators cannot reach into another scope's partition.
    await step(a, cfg(`${thread}#T#x`), { v: "tricky" });
    expect(await b.getTuple(cfg(thread))).toBeUndefined();
    expect(await b.getTuple(cfg(`x#T#${thread}`))).toBeUndefined();
    const other = newSaver();
    expect(await toArray(other.list(cfg(thread)))).toEqual([]);
    expect(await toArray(other.list({}))).toEqual([]);
    await other.deleteThread(thread);
    expect((await a.getTuple(cfg(thread)))?.checkpoint.channel_values).toEqual({ v: "a" });
    expect((await a.getTuple(cfg(`${thread}#T#x`)))?.checkpoint.channel_values).toEqual({ v: "tricky" });
  });

  it("keeps channel values, writes and metadata over the item budget in S3 and reads them back", async () => {
    const saver = itemSaver();
    const thread = randomUUID();
    const big = "x".repeat(450 * 1024);
    const config = await step(saver, cfg(thread), { big, small: 1 }, { note: "m".repeat(350 * 1024) });
    await saver.putWrites(config, [["big", `${big}!`]], "task-1");
    const tuple = await saver.getTuple(config);
    expect(tuple?.checkpoint.channel_values).toEqual({ big, small: 1 });
    expect((tuple!.metadata as Record<string, unknown>).note).toHaveLength(350 * 1024);
    expect(tuple?.pendingWrites).toEqual([["task-1", "big", `${big}!`]]);
    const items = await rows(saver, thread);
    const refs = items.flatMap((i) => Object.keys(i).filter((k) => k.endsWith("_ref")));
    expect(refs.sort()).toEqual(["metadata_ref", "value_ref", "value_ref"]);
    expect(items.find((i) => i.channel === "small")?.value).toBeInstanceOf(Uint8Array);
    for (const i of items) for (const r of refsOf(i)) expect(await exists(r)).toBe(true);
    // Deleting the thread takes its S3 objects too.
    await saver.deleteThread(thread);
    expect(await rows(saver, thread)).toEqual([]);
    for (const i of items) for (const r of refsOf(i)) expect(await exists(r)).toBe(false);
  });

  it("keeps small values in the checkpoint item, inherits them, and gives large ones items of their own", async () => {
    const saver = newSaver();
    const thread = randomUUID();
    const long = "v".repeat(200);
    const c1 = await step(saver, cfg(thread), { a: 1, b: "small", c: long });
    const c2 = await step(saver, c1, { b: "changed" });
    const c3 = await step(saver, c2, {});
    expect((await saver.getTuple(c3))?.checkpoint.channel_values).toEqual({ a: 1, b: "changed", c: long });
    expect((await saver.getTuple(c1))?.checkpoint.channel_values).toEqual({ a: 1, b: "small", c: long });
    const items = await rows(saver, thread);
    // One value item (c, over the inline size); the small ones ride in every checkpoint that holds them.
    expect(items.filter((i) => i.kind === "value").map((v) => v.channel)).toEqual(["c"]);
    const heads = items.filter((i) => i.kind === "checkpoint");
    expect(heads.map((h) => Object.keys(h.inline ?? {}).sort())).toEqual([
      ["a", "b"],
      ["a", "b"],
      ["a", "b"],
    ]);
    expect(heads.map((h) => Object.keys(h.writers))).toEqual([["c"], ["c"], ["c"]]);
    // A fresh saver (no cache of parents) inherits the parent's inline values from the stored item.
    const c4 = await step(newSaver(saver.scope), c3, { a: 2 });
    expect((await saver.getTuple(c4))?.checkpoint.channel_values).toEqual({ a: 2, b: "changed", c: long });
  });

  it("stores only changed channels and reads the others from the checkpoint that wrote them", async () => {
    const saver = itemSaver();
    const thread = randomUUID();
    const c1 = await step(saver, cfg(thread), { a: 1, b: 1 });
    const c2 = await step(saver, c1, { b: 2 });
    const c3 = await step(saver, c2, {});
    expect((await saver.getTuple(c3))?.checkpoint.channel_values).toEqual({ a: 1, b: 2 });
    const values = (await rows(saver, thread)).filter((i) => i.kind === "value");
    expect(values.map((v) => [v.checkpoint_id, v.channel])).toEqual([
      [c1.configurable?.checkpoint_id, "a"],
      [c1.configurable?.checkpoint_id, "b"],
      [c2.configurable?.checkpoint_id, "b"],
    ]);
    // A fork from c1 that writes b again leaves its sibling c2 alone, though both carry version 2 of b.
    const fork = await step(saver, c1, { b: "fork" });
    expect((await saver.getTuple(fork))?.checkpoint.channel_values).toEqual({ a: 1, b: "fork" });
    expect((await saver.getTuple(c2))?.checkpoint.channel_values).toEqual({ a: 1, b: 2 });
  });

  it("keeps the first copy of an ordinary write and the last of a special one", async () => {
    const saver = newSaver();
    const thread = randomUUID();
    const config = await step(saver, cfg(thread), {});
    const big = (c: string) => c.repeat(400 * 1024);
    await saver.putWrites(
      config,
      [
        ["out", big("1")],
        [ERROR, "first error"],
      ],
      "task",
    );
    await saver.putWrites(
      config,
      [
        ["out", big("2")],
        [ERROR, "second error"],
      ],
      "task",
    );
    await saver.putWrites(config, [[INTERRUPT, big("i")]], "task");
    await saver.putWrites(config, [[INTERRUPT, "small now"]], "task");
    const writes = (await saver.getTuple(config))?.pendingWrites ?? [];
    expect(writes.map(([task, ch, v]) => [task, ch, typeof v === "string" ? v.slice(0, 12) : v])).toEqual([
      ["task", INTERRUPT, "small now"],
      ["task", ERROR, "second error"],
      ["task", "out", "111111111111"],
    ]);
    // The losing duplicate's object and the replaced interrupt's object are gone: one object per stored write.
    const items = await rows(saver, thread);
    const refs = items.flatMap(refsOf);
    expect(refs).toHaveLength(1);
    const listed = await s3().send(
      new ListObjectsV2Command({
        Bucket: platformConfig.checkpointBucket,
        Prefix: `checkpoints/${encodeURIComponent(saver.scope)}/`,
      }),
    );
    expect((listed.Contents ?? []).map((o) => o.Key)).toEqual(refs);
  });

  it("deleteByRunId removes exactly the run's checkpoints, writes and values", async () => {
    const saver = itemSaver();
    const thread = randomUUID();
    const big = (c: string) => c.repeat(350 * 1024);
    // Run A: two checkpoints. Run B: two in the root namespace (one writes a big value) and one in a subgraph.
    const a1 = await step(saver, cfg(thread), { x: "A1" }, { run_id: "run-a" });
    await saver.putWrites(a1, [["x", "write-a"]], "ta");
    const a2 = await step(saver, a1, { y: big("a") }, { run_id: "run-a" });
    const b1 = await step(saver, a2, { z: big("b") }, { run_id: "run-b" });
    await saver.putWrites(b1, [["x", big("w")]], "tb");
    const b2 = await step(saver, b1, { x: "B2" }, { run_id: "run-b" });
    const sub = await step(saver, cfg(thread, "child:1"), { s: big("s") }, { run_id: "run-b" });
    await saver.putWrites(sub, [["s", "sub-write"]], "ts");
    // Run C continues from B and still reads B's value of z: that value must outlive B.
    const c1 = await step(saver, b2, {}, { run_id: "run-c" });
    const before = await rows(saver, thread);

    expect(await saver.deleteByRunId(thread, "run-b")).toBe(3);
    const after = await rows(saver, thread);
    const ids = (rows: Item[]) =>
      new Set(rows.filter((r) => r.kind === "checkpoint").map((r) => r.checkpoint_id));
    const id = (c: RunnableConfig) => c.configurable?.checkpoint_id;
    expect(ids(after)).toEqual(new Set([id(a1), id(a2), id(c1)]));
    const bIds = new Set([id(b1), id(b2), id(sub)]);
    const leftOfB = after.filter((r) => bIds.has(r.checkpoint_id));
    // C still reads z (from b1) and x (from b2).
    expect(leftOfB.map((r) => [r.kind, r.channel]).sort()).toEqual([
      ["value", "x"],
      ["value", "z"],
    ]);
    expect(after.filter((r) => !bIds.has(r.checkpoint_id))).toEqual(
      before.filter((r) => !bIds.has(r.checkpoint_id)),
    );
    for (const r of before.filter((r) => bIds.has(r.checkpoint_id)))
      for (const ref of refsOf(r)) expect(await exists(ref)).toBe(r.kind === "value" && r.channel === "z");
    expect(before.filter((r) => bIds.has(r.checkpoint_id)).flatMap(refsOf)).toHaveLength(3);
    expect((await saver.getTuple(c1))?.checkpoint.channel_values).toEqual({
      x: "B2",
      y: big("a"),
      z: big("b"),
    });
    expect(await saver.getTuple(cfg(thread, "child:1"))).toBeUndefined();
    expect(await saver.deleteByRunId(thread, "run-b")).toBe(0);

    // Once C goes too, nothing reads B's values any more.
    expect(await saver.deleteByRunId(thread, "run-c")).toBe(1);
    expect(
      (await rows(saver, thread)).filter((r) => bIds.has(r.checkpoint_id) || r.checkpoint_id === id(c1)),
    ).toEqual([]);
    expect((await saver.getTuple(cfg(thread)))?.config).toEqual(a2);
  });

  it("copyThread copies every checkpoint, write and S3 part; the copy outlives its source", async () => {
    const saver = newSaver();
    const from = randomUUID();
    const to = randomUUID();
    const big = "q".repeat(350 * 1024);
    const c1 = await step(saver, cfg(from), { m: big }, { run_id: "r1", thread_id: from });
    await saver.putWrites(c1, [["m", "w1"]], "t1");
    const c2 = await step(saver, c1, { n: 2 }, { run_id: "r1", thread_id: from });
    await step(saver, cfg(from, "child:1"), { s: 1 }, { run_id: "r1", thread_id: from });
    await saver.putWrites(c2, [[INTERRUPT, big]], "t2");
    const whole = (thread_id: string) => ({ configurable: { thread_id } });
    const source = await toArray(saver.list(whole(from)));
    expect(source).toHaveLength(3);

    await saver.copyThread(from, to);
    const retarget = (t: CheckpointTuple) =>
      JSON.parse(JSON.stringify(t).replaceAll(from, to)) as CheckpointTuple;
    await saver.deleteThread(from);
    expect(await toArray(saver.list(whole(from)))).toEqual([]);
    const copy = await toArray(saver.list(whole(to)));
    expect(copy).toEqual(source.map(retarget));
    expect(copy.map((t) => (t.metadata as Record<string, unknown>).thread_id)).toEqual([to, to, to]);
    // The copy has its own run index.
    expect(await saver.deleteByRunId(to, "r1")).toBe(3);
    expect(await rows(saver, to)).toEqual([]);
  });

  it("runs a LangGraph graph: state survives across invocations, history and forks", async () => {
    const saver = newSaver();
    const State = Annotation.Root({
      items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
      count: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
    });
    const graph = new StateGraph(State)
      .addNode("add", (s) => ({ items: [`item-${s.count}`], count: s.count + 1 }))
      .addEdge(START, "add")
      .addEdge("add", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: randomUUID() } };
    await graph.invoke({ items: ["a"] }, config);
    await graph.invoke({ items: ["b"] }, config);
    expect((await graph.getState(config)).values).toEqual({
      items: ["a", "item-0", "b", "item-1"],
      count: 2,
    });

    const history = await toArray(graph.getStateHistory(config));
    expect(history.map((s) => s.values.count)).toEqual([2, 1, 1, 1, 0, 0]);
    // Fork from the end of the first invocation; the original line is untouched.
    const firstEnd = history[3].config;
    const forked = await graph.updateState(firstEnd, { items: ["fork"], count: 10 });
    expect((await graph.getState(forked)).values).toEqual({ items: ["a", "item-0", "fork"], count: 10 });
    expect((await graph.getState(config)).values.items).toEqual(["a", "item-0", "fork"]);
    expect((await graph.getState(history[0].config)).values).toEqual({
      items: ["a", "item-0", "b", "item-1"],
      count: 2,
    });
  });
});
