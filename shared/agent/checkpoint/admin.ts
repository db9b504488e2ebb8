import { batchGet, batchWrite } from "../../aws/batch.ts";
import { type Key, queryAll, queryPages } from "../../aws/ddb.ts";
import type { ChannelValueItem, CheckpointItem, CheckpointsItem } from "../../records/agent.ts";
import { checkpointPk, childrenPrefix, nsPrefix, valueSk } from "../../records/agent.ts";
import { s3ThreadPrefix } from "../../records/checkpoint-keys.ts";
import { deleteObjects, moveRefs, refsOf } from "./blobs.ts";

// Whole-thread and whole-run operations of the checkpointer. Each deletes what hangs off a checkpoint before the
// checkpoint itself, so an interrupted call leaves every remaining checkpoint whole and a retry finishes the job.
const T = "checkpoints" as const;
/** An item as read to delete it: its key, its kind and (where read) its S3 references. */
type Doomed = Key & Pick<CheckpointsItem, "kind">;
const keyOf = (i: Key) => ({ PK: i.PK, SK: i.SK });
const isHead = (i: Pick<CheckpointsItem, "kind">) => i.kind === "checkpoint";
/** The checkpoint's value items it reads (by their SK). */
const referenced = (h: Pick<CheckpointItem, "checkpoint_ns"> & Partial<Pick<CheckpointItem, "writers">>) =>
  Object.entries(h.writers ?? {}).map(([ch, w]) => valueSk(h.checkpoint_ns, w, ch));

/** Deletes items (children before checkpoints) and the S3 objects they reference. */
async function remove(items: Doomed[]): Promise<void> {
  await deleteObjects(items.flatMap(refsOf));
  await batchWrite(
    T,
    items.filter((i) => !isHead(i)).map((i) => ({ delete: keyOf(i) })),
  );
  await batchWrite(
    T,
    items.filter(isHead).map((i) => ({ delete: keyOf(i) })),
  );
}

export async function deleteThreadCheckpoints(scope: string, threadId: string): Promise<void> {
  const items = await queryAll<Doomed>(T, {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": checkpointPk(scope, threadId) },
    ProjectionExpression: "PK, SK, kind, checkpoint_ref, metadata_ref, value_ref",
    ConsistentRead: true,
  });
  await remove(items);
}

/**
 * Deletes the checkpoints a run wrote (marked with the run's key) with their writes, and every channel value they wrote
 * or pointed to that no remaining checkpoint of the thread points to: a value outlives its checkpoint while a
 * later checkpoint still reads it. Returns how many checkpoints went.
 */
export async function deleteByRunId(scope: string, threadId: string, runId: string): Promise<number> {
  const pk = checkpointPk(scope, threadId);
  // A strongly consistent read of the thread's partition (no index: on DynamoDB an index lags, and a rollback
  // must see the checkpoint its run wrote a moment ago).
  const heads = await queryAll<CheckpointItem>(T, {
    KeyConditionExpression: "PK = :pk",
    FilterExpression: "kind = :kind AND run_id = :run",
    values: { ":pk": pk, ":kind": "checkpoint", ":run": runId },
    ConsistentRead: true,
  });
  if (!heads.length) return 0;
  const doomed = new Set(heads.map((h) => h.SK));
  const kept = new Set<string>();
  for (const ns of new Set(heads.map((h) => h.checkpoint_ns))) {
    const others = await queryAll<Pick<CheckpointItem, "SK" | "checkpoint_ns" | "writers">>(T, {
      KeyConditionExpression: "PK = :pk AND begins_with(SK, :sk)",
      FilterExpression: "kind = :kind",
      values: { ":pk": pk, ":sk": nsPrefix(ns), ":kind": "checkpoint" },
      ProjectionExpression: "SK, checkpoint_ns, writers",
      ConsistentRead: true,
    });
    for (const o of others) if (!doomed.has(o.SK)) for (const sk of referenced(o)) kept.add(sk);
  }
  const children = (
    await Promise.all(
      heads.map((h) =>
        queryAll<Doomed>(T, {
          KeyConditionExpression: "PK = :pk AND begins_with(SK, :sk)",
          values: { ":pk": pk, ":sk": childrenPrefix(h.checkpoint_ns, h.checkpoint_id) },
          ProjectionExpression: "PK, SK, kind, value_ref",
          ConsistentRead: true,
        }),
      ),
    )
  ).flat();
  // Values the run's checkpoints read from checkpoints already deleted: the run was their last reader.
  const own = new Set(children.map((c) => c.SK));
  const orphans = [...new Set(heads.flatMap(referenced))].filter((sk) => !own.has(sk) && !kept.has(sk));
  const found = await batchGet<ChannelValueItem>(
    T,
    orphans.map((SK) => ({ PK: pk, SK })),
  );
  await remove([...children.filter((c) => !kept.has(c.SK)), ...found, ...heads]);
  return heads.length;
}

/**
 * Deletes every checkpoint of a thread but the latest of each namespace, with their writes and every value the
 * kept checkpoints do not read: the thread keeps its latest state and loses its history. Returns how many
 * checkpoints went. A run writing meanwhile only adds checkpoints after the kept one, which stay.
 */
export async function keepLatest(scope: string, threadId: string): Promise<number> {
  const items = await queryAll<
    Doomed &
      Pick<CheckpointsItem, "checkpoint_ns" | "checkpoint_id"> &
      Partial<Pick<CheckpointItem, "writers">>
  >(T, {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": checkpointPk(scope, threadId) },
    ProjectionExpression:
      "PK, SK, kind, checkpoint_ns, checkpoint_id, writers, checkpoint_ref, metadata_ref, value_ref",
    ConsistentRead: true,
  });
  type Listed = (typeof items)[number];
  const latest = new Map<string, Listed>();
  for (const h of items.filter(isHead)) {
    const seen = latest.get(h.checkpoint_ns);
    if (!seen || h.checkpoint_id > seen.checkpoint_id) latest.set(h.checkpoint_ns, h);
  }
  const read = new Set([...latest.values()].flatMap(referenced));
  const keep = (i: Listed) =>
    latest.get(i.checkpoint_ns)?.checkpoint_id === i.checkpoint_id || read.has(i.SK);
  const doomed = items.filter((i) => !keep(i));
  await remove(doomed);
  return doomed.filter(isHead).length;
}

/**
 * Copies every item of a thread to another thread id: keys, run index and S3 parts move to the new thread;
 * `retarget` may rewrite a checkpoint item (its metadata names the thread). Checkpoints are written last.
 */
export async function copyThread(
  scope: string,
  fromThreadId: string,
  toThreadId: string,
  retarget: (head: CheckpointItem) => Promise<CheckpointItem>,
): Promise<void> {
  const from = s3ThreadPrefix(scope, fromThreadId);
  const to = s3ThreadPrefix(scope, toThreadId);
  const copyOf = async (item: CheckpointsItem) => {
    const copy: CheckpointsItem = item.kind === "checkpoint" ? await retarget(item) : { ...item };
    copy.PK = checkpointPk(scope, toThreadId);
    copy.thread_id = toThreadId;
    // Heads of earlier versions carried an index key of their thread; the index is gone.
    if (copy.kind === "checkpoint") {
      delete copy.GSI1PK;
      delete copy.GSI1SK;
    }
    await moveRefs(copy, from, to);
    return copy;
  };
  const heads: CheckpointItem[] = [];
  for await (const page of queryPages<CheckpointsItem>(T, {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": checkpointPk(scope, fromThreadId) },
    ConsistentRead: true,
  })) {
    heads.push(...page.filter((i) => i.kind === "checkpoint"));
    const children = await Promise.all(page.filter((i) => !isHead(i)).map(copyOf));
    await batchWrite(
      T,
      children.map((put) => ({ put })),
    );
  }
  const copies = await Promise.all(heads.map(copyOf));
  await batchWrite(
    T,
    copies.map((put) => ({ put })),
  );
}
