import type { Key } from "../aws/ddb.ts";
import { repository } from "../aws/repository.ts";
import type { ShardedKey } from "./shard.ts";

// The agent server's records, each with its key layout and, where the code reads or writes one record by key,
// its repository. Every key carries the deployment's scope (`<tenant>#<deployment>`), which no field holds, so
// these records carry their keys (PK, SK) as stored; the repositories' lookups name scope and ids.
// Main table:
//   thread        PK AGENT#<scope>#THREAD              SK <thread_id>
//                 AGENT1 AGENT#THREAD_TTL#<shard> / <ttl_expires_at> while it has a TTL (the sweeper reads it)
//   run           PK AGENT#<scope>#RUN#<thread_id>     SK <run_id>       (uuidv7: a thread's runs sort by creation)
//                 AGENT1 AGENT#ACTIVE_RUNS#<shard> / <scope>#<thread_id>#<run_id> while pending or running (the
//                 sweeper and the metrics read this sparse index)
//   cron          PK AGENT#<scope>#CRON                SK <cron_id>
//                 AGENT1 AGENT#CRONS_DUE#<shard> / <next_run_date>#<scope>#<cron_id> while it has a next run (the
//                 cron tick task reads this sparse index)
//   (<shard>: the hash of the thread, run or cron id over AGENT_INDEX_SHARDS; shard.ts)
//   assistant     PK AGENT#<scope>#ASSISTANT           SK <assistant_id>              (the current version)
//   version       PK AGENT#<scope>#ASSISTANT           SK <assistant_id>#V#<8-digit n> (every version)
//   event chunk   PK AGENT#<scope>#EVENTS#<run_id>     SK <10-digit seq of its last frame> (TTL expires_at)
// The agent index is AGENT1 (AGENT1PK/AGENT1SK), never the platform's GSI1: a runtime writes these records and
// its role may not write GSI1's keys. Its readers take the deployment from an item's PK, never from the index key.
// Checkpoints table (every variable part escaped by `esc`: `#` only ever separates):
//   checkpoint    PK <scope>#T#<thread>  SK C#<ns>#<checkpoint_id>
//   write         PK <scope>#T#<thread>  SK C#<ns>#<checkpoint_id>#W#<task_id>#<idx>
//   value         PK <scope>#T#<thread>  SK C#<ns>#<checkpoint_id>#V#<channel>  (written by that checkpoint)
//   store item    PK <scope>#STORE       SK <label>:<label>:….<key>  (TTL expires_at, when put with a ttl)
// Serialized parts too big for an item live in S3 (shared/records/checkpoint-keys.ts, blobs.ts): `<attr>_ref`.

// — key builders —

/** Escapes a variable key part of the checkpoints table: `%` → `%25`, `#` → `%23` (keeps the order of ids). */
export const esc = (s: string) => s.replace(/%/g, "%25").replace(/#/g, "%23");

export const agentKeys = {
  threadsPk: (scope: string) => `AGENT#${scope}#THREAD`,
  runsPk: (scope: string, threadId: string) => `AGENT#${scope}#RUN#${threadId}`,
  assistantsPk: (scope: string) => `AGENT#${scope}#ASSISTANT`,
  cronsPk: (scope: string) => `AGENT#${scope}#CRON`,
  versionSk: (assistantId: string, version: number) => `${assistantId}#V#${String(version).padStart(8, "0")}`,
  eventsPk: (scope: string, runId: string) => `AGENT#${scope}#EVENTS#${runId}`,
  eventSk: (seq: number) => String(seq).padStart(10, "0"),
  storePk: (scope: string) => `${esc(scope)}#STORE`,
};

// Tenant and deployment ids never hold `#`; a thread id in a run's PK may (one made before thread ids were
// validated), so it is matched last, whatever it holds.
const PK_OF_KIND = {
  thread: /^AGENT#([^#]+)#([^#]+)#THREAD$/,
  run: /^AGENT#([^#]+)#([^#]+)#RUN#.+$/,
  cron: /^AGENT#([^#]+)#([^#]+)#CRON$/,
};
/** The tenant and deployment of a thread's, run's or cron's PK (what agentKeys built), else undefined. */
export function deploymentOfPk(
  pk: string,
  kind: keyof typeof PK_OF_KIND,
): { tenant: string; deployment: string } | undefined {
  const m = PK_OF_KIND[kind].exec(pk);
  return m ? { tenant: m[1], deployment: m[2] } : undefined;
}

/** What the agent index's readers need of an item to check its keys: its PK, SK and the ids they are built of. */
export interface IndexedAgentItem extends Key {
  thread_id?: string | null;
  run_id?: string;
  cron_id?: string;
}
/**
 * The tenant and deployment of an item read from the agent index, only when its PK/SK are exactly those of a
 * `kind` record with the ids it holds (a runtime may write any attribute of its own items: a reader of the index
 * trusts the keys, and only keys its own repository would have built).
 */
export function indexedAgentRecord(
  item: IndexedAgentItem,
  kind: keyof typeof PK_OF_KIND,
): { tenant: string; deployment: string } | undefined {
  const ids = deploymentOfPk(item.PK, kind);
  if (!ids) return undefined;
  const scope = `${ids.tenant}#${ids.deployment}`;
  const own =
    kind === "run"
      ? typeof item.thread_id === "string" &&
        item.PK === agentKeys.runsPk(scope, item.thread_id) &&
        item.SK === item.run_id
      : kind === "thread"
        ? item.PK === agentKeys.threadsPk(scope) && item.SK === item.thread_id
        : item.PK === agentKeys.cronsPk(scope) && item.SK === item.cron_id;
  return own ? ids : undefined;
}

/** The agent records' index on the main table (shared/tables.ts). */
export const AGENT_INDEX = "AGENT1";

/** Shards of each sparse AGENT1 partition: every tenant writes them (16 × 1,000 WCU/s per GSI partition). */
export const AGENT_INDEX_SHARDS = 16;
/** The sparse AGENT1 partition of active (pending or running) runs, which the sweeper and the metrics read. */
export const ACTIVE_RUNS: ShardedKey = { base: "AGENT#ACTIVE_RUNS", shards: AGENT_INDEX_SHARDS };
/** The sparse AGENT1 partition of threads with a TTL, sorted by when it runs out, which the sweeper reads. */
export const THREAD_TTL: ShardedKey = { base: "AGENT#THREAD_TTL", shards: AGENT_INDEX_SHARDS };

/** The partition of one thread: its checkpoints with their writes and channel values, in every namespace. */
export const checkpointPk = (scope: string, thread: string) => `${esc(scope)}#T#${esc(thread)}`;
const unesc = (s: string) => s.replace(/%23/g, "#").replace(/%25/g, "%");
/** The scope and thread a checkpointPk names (esc leaves no `#` in either part); undefined for any other key. */
export function checkpointPkParts(pk: string): { scope: string; thread: string } | undefined {
  const at = pk.indexOf("#T#");
  if (at < 0) return undefined;
  const [scope, thread] = [pk.slice(0, at), pk.slice(at + 3)];
  if (thread.includes("#")) return undefined;
  return { scope: unesc(scope), thread: unesc(thread) };
}
/** SK prefix of every checkpoint (and what hangs off it) in one namespace. */
export const nsPrefix = (ns: string) => `C#${esc(ns)}#`;
/** A checkpoint; what it owns sorts right after it, under `<checkpointSk>#`. */
export const checkpointSk = (ns: string, id: string) => `${nsPrefix(ns)}${esc(id)}`;
export const childrenPrefix = (ns: string, id: string) => `${checkpointSk(ns, id)}#`;
export const writeSk = (ns: string, id: string, task: string, idx: number) =>
  `${childrenPrefix(ns, id)}W#${esc(task)}#${idx}`;
/** The value of `channel` written by checkpoint `id` (later checkpoints that did not change it point here). */
export const valueSk = (ns: string, id: string, channel: string) =>
  `${childrenPrefix(ns, id)}V#${esc(channel)}`;

const ownKeys = (r: Key) => ({ PK: r.PK, SK: r.SK });

// — threads —

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";

/**
 * A thread: a copy of its last values (for search) beside the checkpoints, and the lock of its runs — `active_run`
 * (+ `active_attempt`, for fencing) while a run executes, `queued` counting its pending runs (thread-lock.ts).
 */
export interface ThreadRecord extends Key {
  /** With a TTL: THREAD_TTL's shard and `ttl_expires_at`, so the sweeper finds the thread when it runs out. */
  AGENT1PK?: string;
  AGENT1SK?: string;
  /** `ttl` (strategy delete): the thread is deleted, with its runs and checkpoints, this many minutes after
   * its creation or the update that last set it. */
  ttl_minutes?: number;
  /** When the TTL runs out (ISO). */
  ttl_expires_at?: string;
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  values: Record<string, unknown> | null;
  interrupts: Record<string, unknown[]>;
  /** The message of the failure that left the thread in `error`. */
  error?: string;
  /** The graph its first run bound the thread to. */
  graph_id?: string;
  /**
   * The config its last run ran with (the assistant's and the run's, without ids or checkpoints): a graph
   * exported as a factory is rebuilt from it for the thread's state calls, as the reference does.
   */
  config?: GraphConfig;
  active_run?: string;
  active_attempt?: number;
  queued?: number;
}

export const threads = repository<ThreadRecord, { scope: string; thread: string }>({
  table: "main",
  key: ({ scope, thread }) => ({ PK: agentKeys.threadsPk(scope), SK: thread }),
  keysOf: ownKeys,
});

// — runs —

export type RunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";
export type MultitaskStrategy = "reject" | "rollback" | "interrupt" | "enqueue";
/** A user's cancel of a run, as the run's `cancel_action` flag says it. */
export type RunCancelAction = "interrupt" | "rollback";
/** LangGraph's checkpoint durability: after each step while the next runs, before the next step, or at exit. */
export const RUN_DURABILITY = ["async", "sync", "exit"] as const;
export type RunDurability = (typeof RUN_DURABILITY)[number];

/** A LangGraph config as a client gave it: the fields the server reads, the rest passed to the graph. */
export interface GraphConfig {
  configurable?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface RunKwargs {
  input?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown } | null;
  config?: GraphConfig;
  context?: Record<string, unknown>;
  stream_mode: string[];
  stream_subgraphs?: boolean;
  /** false: the run's frames are delivered live only, not kept for a later join (shared/agent/stream/event-log.ts). */
  stream_resumable?: boolean;
  interrupt_before?: string[] | "*";
  interrupt_after?: string[] | "*";
  checkpoint_id?: string;
  checkpoint?: Record<string, unknown>;
  on_disconnect: "cancel" | "continue";
  on_completion: "delete" | "keep";
  /** Called with the run when it finishes (shared/agent/runs/webhook.ts). */
  webhook?: string;
  /** A resume answering no waiting interrupt fails the run, the thread left as it was (LangGraph's strict resume). */
  strict_resume?: boolean;
  /** When the graph stores its checkpoints (LangGraph's `durability`; its default, async, when missing). */
  durability?: RunDurability;
  /** The assistant's config and context when the run was created (the run's own values override them). */
  assistant_config?: GraphConfig;
  assistant_context?: Record<string, unknown>;
}

/**
 * A run. Every status change is a conditional write on the expected current status; a worker holds a running
 * run by its lease (`lease_until`, `worker`) for one `attempt`, and cancellation is the `cancel_action` flag.
 */
export interface RunRecord extends Key {
  /** The active-runs index (ACTIVE_RUNS' shard), removed when the run ends. */
  AGENT1PK?: string;
  AGENT1SK?: string;
  run_id: string;
  thread_id: string;
  assistant_id: string;
  graph_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  kwargs: RunKwargs;
  multitask_strategy: MultitaskStrategy;
  /** The attempt executing it (a retry after a dead worker adds one); 1 when missing. */
  attempt?: number;
  /** Not to start before (ms epoch): `after_seconds`. */
  not_before?: number;
  cancel_action?: RunCancelAction;
  /** While running: the lease's end (ms epoch) and the worker holding it. */
  lease_until?: number;
  worker?: string;
  /** The final values, left by a worker in another process (when they fit). */
  final_values?: unknown;
  /** Why the sweeper failed the run. */
  error?: { error: string; message: string };
  /** DynamoDB's TTL (s epoch): the record of an ended stateless run that waiters in other processes still read. */
  expires_at?: number;
}

export const runs = repository<RunRecord, { scope: string; thread: string; run: string }>({
  table: "main",
  key: ({ scope, thread, run }) => ({ PK: agentKeys.runsPk(scope, thread), SK: run }),
  keysOf: ownKeys,
});

// — crons —

/** The sparse AGENT1 partition of crons with a next run, sorted by it, which the cron tick task reads. */
export const CRONS_DUE: ShardedKey = { base: "AGENT#CRONS_DUE", shards: AGENT_INDEX_SHARDS };

/**
 * A cron: a run created on a schedule (5-field, UTC) — on its thread, or (stateless, `thread_id` null) on a new
 * thread each tick. `next_run_date` is the tick due next (null when none: disabled, or past `end_time`); a tick
 * fires only with the write that moves it on (shared/agent/crons/crons.ts), which makes firing idempotent.
 */
export interface CronRecord extends Key {
  /** CRONS_DUE's shard and `<next_run_date>#<scope>#<cron_id>` while next_run_date is set. */
  AGENT1PK?: string;
  AGENT1SK?: string;
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  schedule: string;
  timezone: string | null;
  end_time: string | null;
  /** The run-create body each tick's run is created with. */
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** Stateless crons: the thread a tick creates is deleted after its run (`delete`, the default) or kept. */
  on_run_completed: "delete" | "keep" | null;
  enabled: boolean;
  user_id: string | null;
  /**
   * Custom auth: the creating user's keys a tick's run carries in `config.configurable` (langgraph_auth_user …),
   * as a run of that user's own request does. Never answered.
   */
  run_as?: Record<string, unknown>;
  next_run_date: string | null;
  created_at: string;
  updated_at: string;
}

export const crons = repository<CronRecord, { scope: string; cron: string }>({
  table: "main",
  key: ({ scope, cron }) => ({ PK: agentKeys.cronsPk(scope), SK: cron }),
  keysOf: ownKeys,
});

// — assistants —

/** An assistant's fields as stored in both its current record and each version. */
export interface AssistantFields {
  assistant_id: string;
  graph_id: string;
  config: GraphConfig;
  context: unknown;
  metadata: Record<string, unknown>;
  version: number;
  name: string;
  description?: string | null;
  created_at: string;
  updated_at?: string;
}

/** The current version of an assistant (changed only by conditional writes). */
export interface AssistantRecord extends Key, AssistantFields {
  kind: "assistant";
}
/** One version of an assistant, as it was written. */
export interface AssistantVersionRecord extends Key, AssistantFields {
  kind: "version";
}

export const assistants = repository<AssistantRecord, { scope: string; id: string }>({
  table: "main",
  key: ({ scope, id }) => ({ PK: agentKeys.assistantsPk(scope), SK: id }),
  keysOf: ownKeys,
});
export const assistantVersions = repository<
  AssistantVersionRecord,
  { scope: string; id: string; version: number }
>({
  table: "main",
  key: ({ scope, id, version }) => ({
    PK: agentKeys.assistantsPk(scope),
    SK: agentKeys.versionSk(id, version),
  }),
  keysOf: ownKeys,
});

// — event log —

/** A chunk of a run's stream frames (`frames`: JSON of {seq, event, data}[]), written in batches and in the run's
 * final transaction. */
export interface EventChunkRecord extends Key {
  frames: string;
  /** TTL (epoch seconds). */
  expires_at: number;
}
/** One frame an item, as earlier versions wrote them (still read). */
export interface EventFrameRecord extends Key {
  frames?: undefined;
  event: string;
  /** The frame's data as JSON. */
  data: string;
}

// — checkpoints —

/** A small channel value stored in its checkpoint item: serializer type and bytes. */
export interface InlineValue {
  t: string;
  v: Uint8Array;
}

/** What every item of a checkpoint carries. */
export interface CheckpointOwned extends Key {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
}

/**
 * A checkpoint without its channel values: `writers` maps a channel to the checkpoint whose value item holds its
 * current value, `inline` holds small values. Its serialized parts sit inline or in S3 (`<part>_ref`).
 */
export interface CheckpointItem extends CheckpointOwned {
  kind: "checkpoint";
  parent_checkpoint_id?: string;
  writers: Record<string, string>;
  inline?: Record<string, InlineValue>;
  checkpoint_type: string;
  metadata_type: string;
  /** The run that wrote it (its metadata's run_id): a rollback deletes by it. */
  run_id?: string;
  checkpoint?: Uint8Array;
  checkpoint_ref?: string;
  metadata?: Uint8Array;
  metadata_ref?: string;
  /** Heads of earlier versions carried an index key of their thread (the index is gone). */
  GSI1PK?: string;
  GSI1SK?: string;
}

/** A task's pending write under the checkpoint it was made against. */
export interface PendingWriteItem extends CheckpointOwned {
  kind: "write";
  task_id: string;
  task_path: string;
  idx: number;
  channel: string;
  value_type: string;
  value?: Uint8Array;
  value_ref?: string;
}

/** A channel value, under the checkpoint that wrote it. */
export interface ChannelValueItem extends CheckpointOwned {
  kind: "value";
  channel: string;
  value_type: string;
  value?: Uint8Array;
  value_ref?: string;
}

/** What hangs off a checkpoint: its task writes and the values it wrote. */
export type CheckpointChild = PendingWriteItem | ChannelValueItem;
/** Any item of a thread's checkpoint partition. */
export type CheckpointsItem = CheckpointItem | CheckpointChild;

// — long-term store —

/** An item of LangGraph's store: its value as JSON; an item put with a TTL carries it and its expiry. */
export interface StoreItemRecord extends Key {
  namespace: string[];
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
  /** The TTL it was put with, in minutes: a read that refreshes TTLs moves `expires_at` to now + this. */
  ttl_minutes?: number;
  /** Epoch seconds after which the item is gone: reads skip it from then, DynamoDB's TTL deletes it later. */
  expires_at?: number;
  /** Its embeddings for semantic search (store.index): float32 vectors of `dims` numbers, back to back. */
  vectors?: Uint8Array;
}

const storeNsPrefix = (ns: string[]) => ns.map((label) => `${label}:`).join("");
export const storeKeys = {
  pk: agentKeys.storePk,
  /** Each label followed by ":": the key prefix of a namespace and everything below it. */
  nsPrefix: storeNsPrefix,
  sortKey: (ns: string[], key: string) => `${storeNsPrefix(ns)}.${key}`,
};

export const storeItems = repository<StoreItemRecord, { scope: string; namespace: string[]; key: string }>({
  table: "checkpoints",
  key: ({ scope, namespace, key }) => ({ PK: storeKeys.pk(scope), SK: storeKeys.sortKey(namespace, key) }),
  keysOf: ownKeys,
});
