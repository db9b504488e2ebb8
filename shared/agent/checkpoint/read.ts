import { type AttributeValue, ScanCommand } from "@aws-sdk/client-dynamodb";
import {
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  maxChannelVersion,
  type SerializerProtocol,
  TASKS,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import { batchGet } from "../../aws/batch.ts";
import { dynamo } from "../../aws/clients.ts";
import { fromItem, type Key, queryAll, queryPages, toItem } from "../../aws/ddb.ts";
import type {
  ChannelValueItem,
  CheckpointChild,
  CheckpointItem,
  CheckpointsItem,
  PendingWriteItem,
} from "../../records/agent.ts";
import { checkpointPk, checkpointSk, childrenPrefix, nsPrefix, valueSk } from "../../records/agent.ts";
import { tableName } from "../../tables.ts";
import { readPart } from "./blobs.ts";

// The read side of the checkpointer: finding checkpoint items and turning them into LangGraph's tuples.
const T = "checkpoints" as const;

/** A checkpoint item and, when already read, the writes and values stored under it. */
export interface Entry {
  head: CheckpointItem;
  children?: CheckpointChild[];
}

export interface Reading {
  serde: SerializerProtocol;
  /** The saver's first channel version, for migrated pending sends. */
  firstVersion: () => number | string;
}

/** What hangs off one checkpoint: its writes and the values it wrote. */
export const childrenOf = (pk: string, ns: string, id: string) =>
  queryAll<CheckpointChild>(T, {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :sk)",
    values: { ":pk": pk, ":sk": childrenPrefix(ns, id) },
    ConsistentRead: true,
  });

/**
 * Pages of a thread's checkpoints, newest first within a namespace (every namespace when `ns` is undefined).
 * Reading backwards, a checkpoint's writes and values come just before it, so one query yields both.
 */
export async function* threadEntries(pk: string, ns?: string, beforeId?: string, pageSize = 100) {
  const range =
    ns !== undefined && beforeId
      ? { cond: "SK BETWEEN :lo AND :hi", values: { ":lo": nsPrefix(ns), ":hi": checkpointSk(ns, beforeId) } }
      : { cond: "begins_with(SK, :lo)", values: { ":lo": ns === undefined ? "C#" : nsPrefix(ns) } };
  let children: CheckpointChild[] = [];
  for await (const page of queryPages<CheckpointsItem>(T, {
    KeyConditionExpression: `PK = :pk AND ${range.cond}`,
    values: { ":pk": pk, ...range.values },
    ScanIndexForward: false,
    ConsistentRead: true,
    Limit: pageSize,
  })) {
    const out: Entry[] = [];
    for (const item of page) {
      if (item.kind !== "checkpoint") children.push(item);
      else {
        const own = (c: CheckpointChild) =>
          c.checkpoint_id === item.checkpoint_id && c.checkpoint_ns === item.checkpoint_ns;
        out.push({ head: item, children: children.filter(own) });
        children = [];
      }
    }
    if (out.length) yield out;
  }
}

/**
 * Every checkpoint of a scope, in no particular order: a table scan. Only LangGraph's contract lists without a
 * thread; the agent server always names one.
 */
export async function* scopeEntries(scope: string): AsyncGenerator<Entry[]> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await dynamo().send(
      new ScanCommand({
        TableName: tableName(T),
        FilterExpression: "begins_with(PK, :threads) AND kind = :kind",
        ExpressionAttributeValues: toItem({ ":threads": checkpointPk(scope, ""), ":kind": "checkpoint" }),
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }),
    );
    const heads = (out.Items ?? []).map((i) => fromItem<CheckpointItem>(i));
    if (heads.length) yield heads.map((head) => ({ head }));
    start = out.LastEvaluatedKey;
  } while (start);
}

/** Tuples for checkpoint items: missing children are fetched, inherited values read in one batch. */
export async function readTuples(r: Reading, entries: Entry[]): Promise<CheckpointTuple[]> {
  const full = await Promise.all(
    entries.map(async ({ head, children }) => ({
      head,
      children: children ?? (await childrenOf(head.PK, head.checkpoint_ns, head.checkpoint_id)),
    })),
  );
  const keyOf = (pk: string, sk: string) => `${pk}\n${sk}`;
  const wanted = new Map<string, Key>();
  for (const { head } of full)
    for (const [ch, writer] of Object.entries(writersOf(head)))
      if (writer !== head.checkpoint_id) {
        const SK = valueSk(head.checkpoint_ns, writer, ch);
        wanted.set(keyOf(head.PK, SK), { PK: head.PK, SK });
      }
  // Value items (batchGet answers untyped items).
  const valueItems = await batchGet<ChannelValueItem>(T, [...wanted.values()]);
  const inherited = new Map(valueItems.map((i) => [keyOf(i.PK, i.SK), i]));
  return Promise.all(
    full.map(async ({ head, children }) => {
      const { thread_id, checkpoint_ns: ns, checkpoint_id: id, parent_checkpoint_id: parentId } = head;
      const checkpoint: Checkpoint = await r.serde.loadsTyped(
        head.checkpoint_type,
        (await readPart(head, "checkpoint"))!,
      );
      const own = new Map(children.filter(isValue).map((c) => [c.channel, c]));
      const values: Record<string, unknown> = {};
      for (const [ch, { t, v }] of Object.entries(head.inline ?? {}))
        values[ch] = await r.serde.loadsTyped(t, v);
      for (const [ch, writer] of Object.entries(writersOf(head))) {
        const item = writer === id ? own.get(ch) : inherited.get(keyOf(head.PK, valueSk(ns, writer, ch)));
        if (item) values[ch] = await loadValue(r, item);
      }
      checkpoint.channel_values = values;
      if (checkpoint.v < 4 && parentId) await migratePendingSends(r, checkpoint, head.PK, ns, parentId);
      const tuple: CheckpointTuple = {
        config: { configurable: { thread_id, checkpoint_ns: ns, checkpoint_id: id } },
        checkpoint,
        metadata: await readMetadata(r, head),
        pendingWrites: await pendingWrites(r, children),
      };
      if (parentId)
        tuple.parentConfig = { configurable: { thread_id, checkpoint_ns: ns, checkpoint_id: parentId } };
      return tuple;
    }),
  );
}

export async function readMetadata(
  r: Reading,
  head: CheckpointItem,
): Promise<CheckpointMetadata & Record<string, unknown>> {
  return r.serde.loadsTyped(head.metadata_type, (await readPart(head, "metadata"))!);
}

const writersOf = (head: CheckpointItem) => head.writers ?? {};
const isValue = (c: CheckpointChild): c is ChannelValueItem => c.kind === "value";
const isWrite = (c: CheckpointChild): c is PendingWriteItem => c.kind === "write";

async function loadValue(r: Reading, item: CheckpointChild): Promise<unknown> {
  return r.serde.loadsTyped(item.value_type, (await readPart(item, "value"))!);
}

/** Writes in the order live execution applies them: (task path, task id, idx). */
async function pendingWrites(r: Reading, children: CheckpointChild[]): Promise<CheckpointPendingWrite[]> {
  const key = (w: PendingWriteItem) => writesSortKey(w.task_path ?? "", w.task_id, w.idx);
  const writes = children.filter(isWrite).sort((a, b) => compareWritesSortKeys(key(a), key(b)));
  return Promise.all(writes.map(async (w) => [w.task_id, w.channel, await loadValue(r, w)]));
}

/** Checkpoints before format v4 kept pending sends as the parent's TASKS writes; v4 keeps them as a channel. */
async function migratePendingSends(
  r: Reading,
  checkpoint: Checkpoint,
  pk: string,
  ns: string,
  parentId: string,
) {
  const writes = await pendingWrites(r, await childrenOf(pk, ns, parentId));
  checkpoint.channel_values[TASKS] = writes.filter((w) => w[1] === TASKS).map((w) => w[2]);
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_versions[TASKS] = versions.length ? maxChannelVersion(...versions) : r.firstVersion();
}
