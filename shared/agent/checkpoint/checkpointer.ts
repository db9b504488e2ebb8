import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  type PendingWrite,
  type SerializerProtocol,
  WRITES_IDX_MAP,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import { dynamo } from "../../aws/clients.ts";
import { cancelCodes, fromItem, getItem, queryAll, toItem, transact } from "../../aws/ddb.ts";
import { groupCreate, groupPut } from "../../aws/group-write.ts";
import { DDB_LIMITS, REQUEST_OVERHEAD_BYTES } from "../../aws/limits.ts";
import { itemBytes } from "../../aws/write-units.ts";
import { LeaseLost, RunAborted } from "../../errors.ts";
import { logger } from "../../log.ts";
import type {
  ChannelValueItem,
  CheckpointItem,
  CheckpointOwned,
  CheckpointsItem,
  InlineValue,
  PendingWriteItem,
} from "../../records/agent.ts";
import { checkpointPk, checkpointSk, valueSk, writeSk } from "../../records/agent.ts";
import { s3PartKey, s3ValueKey, s3WriteKey } from "../../records/checkpoint-keys.ts";
import { tableName } from "../../tables.ts";
import { copyThread, deleteByRunId, deleteThreadCheckpoints, keepLatest } from "./admin.ts";
import { deleteObjects, ownRef, placeParts } from "./blobs.ts";
import { type Entry, type Reading, readMetadata, readTuples, scopeEntries, threadEntries } from "./read.ts";

// LangGraph's checkpointer on DynamoDB (+ S3 for big parts). A checkpoint item holds the checkpoint without its
// channel values and a `writers` map (channel → id of the checkpoint that wrote the current value). A put stores
// only the values of `newVersions`, under its own checkpoint: unchanged channels are never copied, and a fork
// can never overwrite a sibling's value even when both reach the same channel version.
const T = "checkpoints" as const;
const DEFAULT_INLINE_BYTES = 300 * 1024;
const WRITERS_CACHE = 1000;

/**
 * Channel values this small are stored in the checkpoint item (`inline`, every checkpoint repeating them: a
 * pointer to a value item costs about as much), up to the total; larger ones in value items of their own.
 */
const DEFAULT_INLINE_VALUE_BYTES = 128;
const INLINE_TOTAL_BYTES = 512;

/** Where a checkpoint's channel values are: in value items of the checkpoints that wrote them, or inline. */
interface ValueRefs {
  writers: Record<string, string>;
  inline: Record<string, InlineValue>;
}

/** A task write as kept for a tracked thread. */
interface KeptWrite {
  task: string;
  channel: string;
  value: unknown;
  path: string;
  idx: number;
}
/** What a tracked thread wrote in a namespace (see `track`): its latest checkpoint as put, and task writes. */
interface Latest {
  id?: string;
  checkpoint?: Checkpoint;
  metadata?: CheckpointMetadata;
  parentId?: string;
  /** checkpoint id → `<task>\n<idx>` → write. A checkpoint's writes may come before its put. */
  writes: Map<string, Map<string, KeptWrite>>;
}

export interface DynamoCheckpointSaverOptions {
  /** `<tenant>#<deployment>`: every key carries it, so deployments never see each other's threads. */
  scope: string;
  serde?: SerializerProtocol;
  /** Serialized parts of one item beyond this many bytes go to S3 (DynamoDB items stop at 400 KB). */
  inlineBytes?: number;
  /** Channel values up to this many bytes are kept in the checkpoint item (default 128; 0: never). */
  inlineValueBytes?: number;
}

const threadOf = (config: RunnableConfig): string | undefined => {
  const t = config.configurable?.thread_id;
  return t === undefined || t === null || t === "" ? undefined : String(t);
};

/**
 * Lease fencing: the run (its record in the main table) and the attempt that executes it. A worker that stalled
 * past its lease, whose run was retried meanwhile (attempt + 1), can no longer store a checkpoint.
 */
export interface RunFence {
  key: { PK: string; SK: string };
  attempt: number;
  /** The run the attempt executes: a write of another run on the thread is refused while this one tracks it. */
  run?: string;
}

/** How many runs that ended here a saver remembers, to refuse their late writes. */
const ENDED_RUNS_KEPT = 10_000;

/** The agent run a config executes (the worker puts its id in the metadata), if any. */
function runIdOf(config: RunnableConfig): string | undefined {
  const runId = config.metadata?.run_id ?? config.configurable?.run_id;
  return typeof runId === "string" ? runId : undefined;
}

/** A run's config metadata as checkpoint metadata: plain values, LangSmith's and LangGraph's internals left out. */
function runMetadata(config: RunnableConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config.metadata ?? {}))
    if (!k.startsWith("ls_") && !k.startsWith("__") && ["string", "number", "boolean"].includes(typeof v))
      out[k] = v;
  return out;
}

/**
 * A fenced write lands only while the run's attempt owns the run and no rollback of it was asked for: a write
 * of an aborted graph that lands after the rollback deleted the run's checkpoints would outlive it.
 */
const fenceCheck = (fence: RunFence) => ({
  ConditionCheck: {
    TableName: tableName("main"),
    Key: toItem(fence.key),
    ConditionExpression:
      "#s = :running AND attempt = :attempt AND (attribute_not_exists(cancel_action) OR cancel_action <> :rollback)",
    ExpressionAttributeNames: { "#s": "status" },
    ExpressionAttributeValues: toItem({
      ":running": "running",
      ":attempt": fence.attempt,
      ":rollback": "rollback",
    }),
  },
});

/** Why a fenced write was refused: the run is being rolled back, or this attempt no longer owns it. */
async function refusal(fence: RunFence): Promise<Error> {
  const run = await getItem<{ status?: string; attempt?: number; cancel_action?: string }>(
    "main",
    fence.key,
    true,
  );
  return run?.status === "running" && run.attempt === fence.attempt && run.cancel_action === "rollback"
    ? new RunAborted("rollback")
    : new LeaseLost(fence.key.SK, fence.attempt);
}

export class DynamoCheckpointSaver extends BaseCheckpointSaver {
  readonly scope: string;
  readonly inlineBytes: number;
  readonly inlineValueBytes: number;
  /** Writers maps of recent puts: a run's next put names the previous one as parent, so it needs no read. */
  private writersCache = new Map<string, ValueRefs>();
  /** Threads whose run executes here → their latest checkpoint per namespace (see `track`). */
  private latest = new Map<string, Map<string, Latest>>();
  /** Task writes of tracked threads not stored yet: they ride in the thread's next checkpoint transaction. */
  private deferred = new Map<string, PendingWriteItem[]>();
  /** A tracked thread's fence: its checkpoints are stored only while the run's attempt still owns the run. */
  private fences = new Map<string, RunFence>();
  /** Runs that ended here (untracked): a late write of theirs, from a graph stopped mid-step, is refused. */
  private ended = new Set<string>();
  /** Writes of runs executing here, still in flight (see `afterRunWrites`). */
  private inflight = new Map<string, { pending: Set<Promise<unknown>>; started: number }>();

  constructor(options: DynamoCheckpointSaverOptions) {
    super(options.serde);
    if (!options.scope) throw new Error("DynamoCheckpointSaver needs a scope");
    this.scope = options.scope;
    this.inlineBytes = options.inlineBytes ?? DEFAULT_INLINE_BYTES;
    this.inlineValueBytes = options.inlineValueBytes ?? DEFAULT_INLINE_VALUE_BYTES;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const thread = threadOf(config);
    if (thread === undefined) return undefined;
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const pk = checkpointPk(this.scope, thread);
    const id = getCheckpointId(config);
    const mine = this.latest.get(thread)?.get(ns);
    if (mine?.id && (!id || id === mine.id)) return this.latestTuple(thread, ns, mine);
    let entry: Entry | undefined;
    if (id) {
      // One query: the checkpoint's key is the prefix of its writes' and values' keys.
      const items = await queryAll<CheckpointsItem>(T, {
        KeyConditionExpression: "PK = :pk AND begins_with(SK, :sk)",
        values: { ":pk": pk, ":sk": checkpointSk(ns, id) },
        ConsistentRead: true,
      });
      const mine = items.filter((i) => i.checkpoint_ns === ns && i.checkpoint_id === id);
      const head = mine.find((i) => i.kind === "checkpoint");
      if (head) entry = { head, children: mine.filter((i) => i.kind !== "checkpoint") };
    } else {
      for await (const page of threadEntries(pk, ns, undefined, 50)) {
        entry = page[0];
        break;
      }
    }
    return entry ? (await readTuples(this.reading(), [entry]))[0] : undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter, before } = options;
    const thread = threadOf(config);
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const onlyId = config.configurable?.checkpoint_id as string | undefined;
    const onlyNs = config.configurable?.checkpoint_ns as string | undefined;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const pages =
      thread === undefined
        ? scopeEntries(this.scope)
        : threadEntries(checkpointPk(this.scope, thread), onlyNs, beforeId);
    for await (const page of pages) {
      const picked: Entry[] = [];
      for (const entry of page) {
        const id: string = entry.head.checkpoint_id;
        if (onlyId && id !== onlyId) continue;
        if (onlyNs !== undefined && entry.head.checkpoint_ns !== onlyNs) continue;
        if (beforeId && !(id < beforeId)) continue;
        if (filter && Object.keys(filter).length) {
          const metadata = await readMetadata(this.reading(), entry.head);
          if (!Object.entries(filter).every(([k, v]) => isDeepStrictEqual(metadata[k], v))) continue;
        }
        picked.push(entry);
        if (picked.length >= remaining) break;
      }
      for (const tuple of await readTuples(this.reading(), picked)) yield tuple;
      remaining -= picked.length;
      if (remaining <= 0) return;
    }
  }

  /**
   * While a run executes on a tracked thread, its checkpoints record the run's metadata (run_id, graph_id, …:
   * LangGraph.js keeps a run's config metadata out of checkpoint metadata; the reference server, and
   * `deleteByRunId`, need it there), and its writes are followed until they land (`afterRunWrites`).
   */
  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const refused = this.refusedWrite(config);
    if (refused) return Promise.reject(refused);
    const run = this.runOf(config);
    const tagged = run ? ({ ...runMetadata(config), ...metadata } as CheckpointMetadata) : metadata;
    // The fence as the write is asked for (the thread may pass to its next run before the write is stored).
    const fence = this.fences.get(threadOf(config) ?? "");
    return this.follow(run, this.storeCheckpoint(config, checkpoint, tagged, newVersions, fence));
  }

  putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const refused = this.refusedWrite(config);
    if (refused) return Promise.reject(refused);
    return this.follow(this.runOf(config), this.storeWrites(config, writes, taskId, taskPath));
  }

  /**
   * A write this process knows to be stale: of a run that ended here, or of another run than the one that
   * tracks the thread (which holds the thread's lock). Such writes come from a graph stopped mid-step whose
   * last puts were still to be made; DynamoDB's fence could not tell them from the thread's current run.
   */
  private refusedWrite(config: RunnableConfig): LeaseLost | undefined {
    const runId = runIdOf(config);
    if (runId === undefined) return undefined;
    const owner = this.fences.get(threadOf(config) ?? "")?.run;
    if (this.ended.has(runId) || (owner && owner !== runId)) return new LeaseLost(runId, 0);
    return undefined;
  }

  /** The run a config belongs to, when it executes on a thread tracked here. */
  private runOf(config: RunnableConfig): string | undefined {
    const thread = threadOf(config);
    if (thread === undefined || !this.latest.has(thread)) return undefined;
    return runIdOf(config);
  }

  private follow<T>(runId: string | undefined, p: Promise<T>): Promise<T> {
    if (!runId) return p;
    const entry = this.inflight.get(runId) ?? { pending: new Set<Promise<unknown>>(), started: 0 };
    this.inflight.set(runId, entry);
    entry.started++;
    entry.pending.add(p);
    const done = () => entry.pending.delete(p);
    p.then(done, done);
    return p;
  }

  /**
   * Runs `step` once the run's writes settled, again while more started meanwhile: an aborted graph.stream
   * returns before its last puts land, and a rollback must delete those too.
   */
  async afterRunWrites(runId: string, step: () => Promise<unknown>): Promise<void> {
    for (let round = 0; round < 10; round++) {
      const w = this.inflight.get(runId);
      const seen = w?.started ?? 0;
      while (w?.pending.size) await Promise.allSettled([...w.pending]);
      await step();
      await new Promise((r) => setTimeout(r, 50));
      if ((this.inflight.get(runId)?.started ?? 0) === seen) break;
    }
  }

  forgetRun(runId: string): void {
    this.inflight.delete(runId);
  }

  private async storeCheckpoint(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
    fence: RunFence | undefined,
  ): Promise<RunnableConfig> {
    const thread = threadOf(config);
    if (thread === undefined)
      throw new Error("Cannot put a checkpoint: config.configurable.thread_id is missing");
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const parentId: string | undefined = config.configurable?.checkpoint_id || undefined;
    const id = checkpoint.id;
    const pk = checkpointPk(this.scope, thread);
    const stored = copyCheckpoint(checkpoint);
    const values = stored.channel_values;
    stored.channel_values = {};

    // Small values ride in the checkpoint item itself. Other unchanged channels keep pointing where the parent's
    // did; changed ones point here (or nowhere, if emptied).
    const parent = await this.parentRefs(pk, ns, parentId);
    const inline: Record<string, InlineValue> = {};
    let inlineTotal = 0;
    const writers: Record<string, string> = {};
    const valueItems: ChannelValueItem[] = [];
    const isNew = new Set(Object.keys(newVersions));
    await Promise.all(
      Object.keys(stored.channel_versions).map(async (ch) => {
        if (!isNew.has(ch)) {
          // Unchanged: kept as the parent kept it (this runs before any changed value is sized below, so the
          // inherited inline values count against the checkpoint's total first).
          if (parent.writers[ch] !== undefined) writers[ch] = parent.writers[ch];
          else if (parent.inline[ch]) {
            inline[ch] = parent.inline[ch];
            inlineTotal += parent.inline[ch].v.byteLength;
          }
          return;
        }
        if (!Object.hasOwn(values, ch)) return; // emptied by this step
        const [type, bytes] = await this.serde.dumpsTyped(values[ch]);
        if (
          bytes.byteLength <= this.inlineValueBytes &&
          inlineTotal + bytes.byteLength <= INLINE_TOTAL_BYTES
        ) {
          inlineTotal += bytes.byteLength;
          inline[ch] = { t: type, v: bytes };
          return;
        }
        writers[ch] = id;
        const item: ChannelValueItem = {
          ...this.base(pk, thread, ns, id),
          SK: valueSk(ns, id, ch),
          kind: "value",
          channel: ch,
          value_type: type,
        };
        const key = s3ValueKey(this.scope, thread, ns, id, ch);
        await placeParts(item, [{ attr: "value", bytes, key }], this.inlineBytes);
        valueItems.push(item);
      }),
    );
    const [[ctype, cbytes], [mtype, mbytes]] = await Promise.all([
      this.serde.dumpsTyped(stored),
      this.serde.dumpsTyped(metadata),
    ]);
    const head: CheckpointItem = {
      ...this.base(pk, thread, ns, id),
      SK: checkpointSk(ns, id),
      kind: "checkpoint",
      parent_checkpoint_id: parentId,
      writers,
      ...(Object.keys(inline).length ? { inline } : {}),
      checkpoint_type: ctype,
      metadata_type: mtype,
    };
    const runId = (metadata as Record<string, unknown>).run_id;
    if (typeof runId === "string" && runId) head.run_id = runId;
    const partKey = (part: "checkpoint" | "metadata") => s3PartKey(this.scope, thread, ns, id, part);
    await placeParts(
      head,
      [
        { attr: "checkpoint", bytes: cbytes, key: partKey("checkpoint") },
        { attr: "metadata", bytes: mbytes, key: partKey("metadata") },
      ],
      this.inlineBytes,
    );
    const writes = this.deferred.get(thread) ?? [];
    this.deferred.delete(thread);
    await this.store(valueItems, head, writes, fence);
    this.remember(pk, ns, id, { writers, inline });
    const mine = this.tracked(thread, ns);
    if (mine) {
      // The values a read would find: those of the channels the checkpoint points to.
      const kept: Record<string, unknown> = {};
      for (const ch of [...Object.keys(writers), ...Object.keys(inline)])
        if (Object.hasOwn(values, ch)) kept[ch] = values[ch];
      Object.assign(mine, { id, checkpoint: { ...checkpoint, channel_values: kept }, metadata, parentId });
    }

    return { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id } };
  }

  /**
   * A reader that finds a checkpoint must find every value it points to. Usually the values and the
   * checkpoint fit one transaction (one request, all or nothing); else the values go first, the checkpoint last.
   */
  private async store(
    values: ChannelValueItem[],
    head: CheckpointItem,
    writes: PendingWriteItem[] = [],
    fence?: RunFence,
  ): Promise<void> {
    const puts = [...values, head].map(toItem);
    const creates = writes.map(toItem);
    const fenced = fence ? 1 : 0;
    const count = puts.length + creates.length + fenced;
    const bytes = [...puts, ...creates].reduce((n, i) => n + itemBytes(i) + REQUEST_OVERHEAD_BYTES, 0);
    if (
      count <= DDB_LIMITS.transactItems &&
      bytes + fenced * REQUEST_OVERHEAD_BYTES <= DDB_LIMITS.transactBytes
    ) {
      try {
        await transact([
          ...(fence ? [fenceCheck(fence)] : []),
          ...puts.map((Item) => ({ Put: { TableName: tableName(T), Item } })),
          ...creates.map((Item) => ({
            Put: { TableName: tableName(T), Item, ConditionExpression: "attribute_not_exists(SK)" },
          })),
        ]);
        return;
      } catch (err) {
        const codes = cancelCodes(err);
        if (fence && codes?.[0] === "ConditionalCheckFailed") throw await refusal(fence);
        if (!writes.length || !codes?.includes("ConditionalCheckFailed")) throw err;
      }
      // A replayed task's write was stored before: the writes one by one, then the checkpoint alone.
      await this.createWrites(writes);
      await this.store(values, head, [], fence);
      return;
    }
    // Too much for one transaction: writes and values in grouped calls cut to DynamoDB's limits, then the
    // checkpoint alone (fenced like the rest).
    await this.createWrites(writes);
    await groupPut(T, values);
    await this.store([], head, [], fence);
  }

  /** Stores task writes where none is stored yet (the first copy wins), dropping a losing copy's S3 object. */
  private async createWrites(writes: PendingWriteItem[]): Promise<void> {
    const created = await groupCreate(T, writes);
    const orphans: string[] = [];
    writes.forEach((item, i) => {
      const ref = ownRef(item, "value");
      if (!created[i] && ref) orphans.push(ref);
    });
    if (orphans.length) await deleteObjects(orphans);
  }

  private async storeWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const thread = threadOf(config);
    if (thread === undefined) throw new Error("Cannot put writes: config.configurable.thread_id is missing");
    const id: string | undefined = config.configurable?.checkpoint_id;
    if (!id) throw new Error("Cannot put writes: config.configurable.checkpoint_id is missing");
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const pk = checkpointPk(this.scope, thread);
    // Special channels (error, interrupt, …) have fixed negative indices and replace what a retry wrote;
    // ordinary writes keep the first copy, so a replayed task cannot change a stored result.
    const indexed = writes.map(([channel, value], i) => ({
      channel,
      value,
      idx: Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel] : i,
    }));
    const mine = this.tracked(thread, ns);
    if (mine) {
      const kept = mine.writes.get(id) ?? new Map<string, KeptWrite>();
      mine.writes.set(id, kept);
      for (const { channel, value, idx } of indexed) {
        const key = `${taskId}\n${idx}`;
        if (idx < 0 || !kept.has(key))
          kept.set(key, { task: taskId, channel, value, path: taskPath ?? "", idx });
      }
    }
    const items = await Promise.all(
      indexed.map(async ({ channel, value, idx }) => {
        const [type, bytes] = await this.serde.dumpsTyped(value);
        const item: PendingWriteItem = {
          ...this.base(pk, thread, ns, id),
          SK: writeSk(ns, id, taskId, idx),
          kind: "write",
          task_id: taskId,
          task_path: taskPath ?? "",
          idx,
          channel,
          value_type: type,
        };
        // A kept write's object must not be overwritten by a losing duplicate, hence a unique key for those.
        const key = s3WriteKey(this.scope, thread, ns, id, taskId, idx) + (idx < 0 ? "" : `-${randomUUID()}`);
        await placeParts(item, [{ attr: "value", bytes, key }], this.inlineBytes);
        return item;
      }),
    );
    const kept = items.filter((i) => i.idx >= 0);
    const replaced = items.filter((i) => i.idx < 0).map((item) => this.replaceWrite(item));
    if (this.latest.has(thread)) {
      // A tracked thread's ordinary writes ride in its next checkpoint's transaction (or `settle`).
      this.deferred.set(thread, [...(this.deferred.get(thread) ?? []), ...kept]);
      await Promise.all(replaced);
      return;
    }
    await Promise.all([this.createWrites(kept), ...replaced]);
  }

  /**
   * While a run executes on `thread` in this process (it holds the thread's lock, so it is the thread's only
   * writer), the saver keeps the latest checkpoint it put per namespace with its writes: reading the state
   * right after the run needs no query. Its ordinary task writes are stored with the next checkpoint (one
   * transaction for both) or by `settle`; a crash in between loses only writes the retried run redoes from
   * the last checkpoint. `untrack` ends it; deleting checkpoints forgets it.
   */
  track(thread: string, fence?: RunFence): void {
    this.latest.set(thread, new Map());
    if (fence) this.fences.set(thread, fence);
    if (fence?.run) this.ended.delete(fence.run);
  }

  /**
   * A worker that lost its run to a retry drops what it tracked, storing nothing it held — unless a retry in
   * this process tracks the thread already (its fence replaced this one).
   */
  abandon(thread: string, fence: RunFence): void {
    if (this.fences.get(thread) !== fence) return;
    this.latest.delete(thread);
    this.fences.delete(thread);
    this.deferred.delete(thread);
  }

  /**
   * Ends tracking; resolves once writes still held are stored (errors are logged). With a fence, only while
   * it is still the thread's: a run ends after it released the thread, and the thread's next run may already
   * track it here (its checkpoints must stay tagged with its run id and fenced, or a rollback cannot find them).
   */
  untrack(thread: string, fence?: RunFence): Promise<void> {
    if (fence?.run) {
      this.ended.add(fence.run);
      if (this.ended.size > ENDED_RUNS_KEPT) this.ended.delete(this.ended.values().next().value as string);
    }
    if (fence && this.fences.get(thread) !== fence) return Promise.resolve();
    this.latest.delete(thread);
    this.fences.delete(thread);
    return this.settle(thread).catch((err) =>
      logger.error("checkpoint writes could not be stored", { thread_id: thread, error: err }),
    );
  }

  /** Stores the task writes a tracked thread still holds (its run calls this before it ends). */
  async settle(thread: string): Promise<void> {
    const writes = this.deferred.get(thread) ?? [];
    this.deferred.delete(thread);
    if (writes.length) await this.createWrites(writes);
  }

  private tracked(thread: string, ns: string): Latest | undefined {
    const byNs = this.latest.get(thread);
    if (!byNs) return undefined;
    let l = byNs.get(ns);
    if (!l) {
      l = { writes: new Map() };
      byNs.set(ns, l);
    }
    return l;
  }

  /** A tracked latest checkpoint as a tuple, its values copied through the serializer as a read would. */
  private async latestTuple(thread: string, ns: string, l: Latest): Promise<CheckpointTuple> {
    const copy = async (v: unknown) => this.serde.loadsTyped(...(await this.serde.dumpsTyped(v)));
    const values: Record<string, unknown> = {};
    for (const [ch, v] of Object.entries(l.checkpoint!.channel_values)) values[ch] = await copy(v);
    const writes = [...(l.writes.get(l.id!)?.values() ?? [])]
      .map((w) => ({ w, sort: writesSortKey(w.path, w.task, w.idx) }))
      .sort((a, b) => compareWritesSortKeys(a.sort, b.sort));
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const { w } of writes) pendingWrites.push([w.task, w.channel, await copy(w.value)]);
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: l.id } },
      checkpoint: { ...copyCheckpoint(l.checkpoint!), channel_values: values },
      metadata: (await copy(l.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (l.parentId)
      tuple.parentConfig = {
        configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: l.parentId },
      };
    return tuple;
  }

  /** Stores a special-channel write over any earlier one, deleting the object the earlier one left in S3. */
  private async replaceWrite(item: PendingWriteItem): Promise<void> {
    const out = await dynamo().send(
      new PutItemCommand({ TableName: tableName(T), Item: toItem(item), ReturnValues: "ALL_OLD" }),
    );
    const old = out.Attributes ? fromItem<PendingWriteItem>(out.Attributes) : undefined;
    const oldRef = old && ownRef(old, "value");
    if (oldRef && oldRef !== item.value_ref) await deleteObjects([oldRef]);
  }

  async deleteThread(threadId: string): Promise<void> {
    await deleteThreadCheckpoints(this.scope, threadId);
    this.forget(threadId);
  }

  /**
   * Deletes every checkpoint whose metadata.run_id is `runId` (any namespace), with its writes and the values
   * only it needed: a rolled-back run leaves no trace. Returns how many checkpoints were deleted.
   */
  async deleteByRunId(threadId: string, runId: string): Promise<number> {
    const n = await deleteByRunId(this.scope, threadId, runId);
    this.forget(threadId);
    return n;
  }

  /** Deletes every checkpoint of a thread but the latest (per namespace). Returns how many were deleted. */
  async keepLatest(threadId: string): Promise<number> {
    const n = await keepLatest(this.scope, threadId);
    this.forget(threadId);
    return n;
  }

  /** Copies every checkpoint of a thread (all namespaces, writes, values, S3 parts) to another thread id. */
  async copyThread(fromThreadId: string, toThreadId: string): Promise<void> {
    await copyThread(this.scope, fromThreadId, toThreadId, (head) => this.retargetMetadata(head, toThreadId));
  }

  /**
   * Merges `patch` into the metadata of the thread's latest root checkpoint (PATCH /threads/{id}/state); the
   * checkpoint is otherwise left as it is. Answers false when the thread has no checkpoint.
   */
  async patchLatestMetadata(threadId: string, patch: Record<string, unknown>): Promise<boolean> {
    let head: CheckpointItem | undefined;
    for await (const page of threadEntries(checkpointPk(this.scope, threadId), "", undefined, 50)) {
      head = page[0]?.head;
      break;
    }
    if (!head) return false;
    const metadata = { ...(await readMetadata(this.reading(), head)), ...patch } as CheckpointMetadata;
    const [type, bytes] = await this.serde.dumpsTyped(metadata);
    const out: CheckpointItem = { ...head, metadata_type: type };
    delete out.metadata;
    delete out.metadata_ref;
    const key = s3PartKey(this.scope, threadId, head.checkpoint_ns, head.checkpoint_id, "metadata");
    await placeParts(
      out,
      [{ attr: "metadata", bytes, key }],
      this.inlineBytes - (out.checkpoint?.byteLength ?? 0),
    );
    // Only over the checkpoint as it is: one a rollback deleted meanwhile stays deleted.
    try {
      await dynamo().send(
        new PutItemCommand({
          TableName: tableName(T),
          Item: toItem(out),
          ConditionExpression: "attribute_exists(SK)",
        }),
      );
    } catch (err) {
      if ((err as Error).name === "ConditionalCheckFailedException") return false;
      throw err;
    }
    const oldMetadata = ownRef(head, "metadata");
    if (oldMetadata && !out.metadata_ref) await deleteObjects([oldMetadata]);
    const mine = this.latest.get(threadId)?.get("");
    if (mine?.id === head.checkpoint_id) mine.metadata = metadata;
    return true;
  }

  /** After checkpoints of a thread were deleted: nothing remembered of it may be used or written. */
  private forget(threadId: string): void {
    this.writersCache.clear();
    this.deferred.delete(threadId);
    this.latest.get(threadId)?.clear();
  }

  private reading(): Reading {
    return { serde: this.serde, firstVersion: () => this.getNextVersion(undefined) };
  }

  private base(pk: string, thread: string, ns: string, id: string): Omit<CheckpointOwned, "SK"> {
    return { PK: pk, thread_id: thread, checkpoint_ns: ns, checkpoint_id: id };
  }

  /** A copied checkpoint's metadata names its new thread. */
  private async retargetMetadata(head: CheckpointItem, toThreadId: string): Promise<CheckpointItem> {
    const metadata = await readMetadata(this.reading(), head);
    if (metadata.thread_id === undefined) return head;
    const [type, bytes] = await this.serde.dumpsTyped({ ...metadata, thread_id: toThreadId });
    const out: CheckpointItem = { ...head, metadata_type: type };
    delete out.metadata;
    delete out.metadata_ref;
    const key = s3PartKey(this.scope, toThreadId, head.checkpoint_ns, head.checkpoint_id, "metadata");
    const budget = this.inlineBytes - (out.checkpoint?.byteLength ?? 0);
    await placeParts(out, [{ attr: "metadata", bytes, key }], budget);
    return out;
  }

  private async parentRefs(pk: string, ns: string, parentId?: string): Promise<ValueRefs> {
    if (!parentId) return { writers: {}, inline: {} };
    const cached = this.writersCache.get(`${pk}\n${ns}\n${parentId}`);
    if (cached) return cached;
    const parent = await getItem<CheckpointItem>(T, { PK: pk, SK: checkpointSk(ns, parentId) }, true);
    return { writers: parent?.writers ?? {}, inline: parent?.inline ?? {} };
  }

  private remember(pk: string, ns: string, id: string, refs: ValueRefs) {
    if (this.writersCache.size >= WRITERS_CACHE)
      this.writersCache.delete(this.writersCache.keys().next().value!);
    this.writersCache.set(`${pk}\n${ns}\n${id}`, refs);
  }
}
