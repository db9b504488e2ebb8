import { batchGet } from "../../aws/batch.ts";
import { queryAll } from "../../aws/ddb.ts";
import { Conflict, NotFound } from "../../errors.ts";
import { contains } from "../../json-contains.ts";
import { agentKeys, THREAD_TTL, type ThreadRecord, type ThreadStatus, threads } from "../../records/agent.ts";
import { shardKey } from "../../records/shard.ts";
import { isoNow } from "../../time.ts";
import { threadDefaultTtl } from "../artifact/ttl.ts";
import { type AuthFilters, matchesAuthFilters } from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";

// Threads of a deployment's agent server: one partition per deployment in the main table (records and keys:
// shared/records/agent.ts). The checkpoints themselves live in the checkpoints table; a thread keeps a copy of
// its last values for search, and `active_run` — the lock that lets one run at a time execute.

const PRIVATE = [
  "PK",
  "SK",
  "AGENT1PK",
  "AGENT1SK",
  "active_run",
  "active_attempt",
  "graph_id",
  "queued",
  "ttl_minutes",
  "ttl_expires_at",
] as const;

/** The attributes that give a thread a TTL of `minutes` from `at` (ms). */
function ttlFields(threadId: string, minutes: number, at: number): Partial<ThreadRecord> {
  const expires = new Date(at + minutes * 60_000).toISOString();
  const pk = shardKey(THREAD_TTL, threadId);
  return { ttl_minutes: minutes, ttl_expires_at: expires, AGENT1PK: pk, AGENT1SK: expires };
}
/** A thread as the API shows it: its record without the keys and the lock's bookkeeping. */
export type Thread = Omit<ThreadRecord, (typeof PRIVATE)[number] | "error"> & {
  config?: Record<string, unknown>;
  error?: unknown;
};

function toThread(item: ThreadRecord): Thread {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!(PRIVATE as readonly string[]).includes(k)) out[k] = v;
  return { values: null, interrupts: {}, metadata: {}, ...out } as Thread;
}

export async function getThreadItem(d: AgentDeployment, threadId: string): Promise<ThreadRecord | undefined> {
  return threads.get({ scope: d.scope, thread: threadId });
}

export async function getThread(d: AgentDeployment, threadId: string): Promise<Thread> {
  const item = await getThreadItem(d, threadId);
  if (!item) throw new NotFound(`Thread with ID ${threadId} not found`);
  return toThread(item);
}

/** A new idle thread's record: the one place a thread record is made (a request's thread, a cron's tick). */
export function newThreadRecord(
  d: AgentDeployment,
  threadId: string,
  at: string,
  metadata: Record<string, unknown>,
): ThreadRecord {
  return {
    ...threads.key({ scope: d.scope, thread: threadId }),
    thread_id: threadId,
    created_at: at,
    updated_at: at,
    state_updated_at: at,
    metadata,
    status: "idle",
    values: null,
    interrupts: {},
  };
}

/** Creates a thread; an existing id answers 409 (`raise`) or the existing thread (`do_nothing`). */
export async function createThread(
  d: AgentDeployment,
  input: {
    thread_id?: string;
    metadata?: Record<string, unknown>;
    if_exists?: "raise" | "do_nothing";
    /** Minutes until the thread is deleted (absent: langgraph.json checkpointer.ttl.default_ttl, if set). */
    ttl?: number;
  },
  /** Runs once the thread is new (not for an existing one), before it is answered. */
  afterCreate?: (threadId: string) => Promise<void>,
): Promise<Thread> {
  const now = isoNow();
  const threadId = input.thread_id ?? crypto.randomUUID();
  const metadata = Object.fromEntries(
    Object.entries(input.metadata ?? {}).filter(([, v]) => v !== undefined),
  );
  const ttl = input.ttl ?? (await threadDefaultTtl(d.runtime?.artifact));
  const item: ThreadRecord = {
    ...newThreadRecord(d, threadId, now, metadata),
    ...(ttl ? ttlFields(threadId, ttl, Date.parse(now)) : {}),
  };
  if (typeof metadata.graph_id === "string") item.graph_id = metadata.graph_id;
  if (await threads.create(item)) {
    if (!afterCreate) return toThread(item);
    await afterCreate(threadId);
    return getThread(d, threadId);
  }
  if (input.if_exists === "do_nothing") return getThread(d, threadId);
  throw new Conflict("Thread already exists");
}

export async function patchThread(
  d: AgentDeployment,
  threadId: string,
  metadata: Record<string, unknown> = {},
  /** Minutes from now until the thread is deleted (replacing any earlier TTL). */
  ttl?: number,
): Promise<Thread> {
  const now = isoNow();
  const set: Record<string, unknown> = {
    updated_at: now,
    ...(ttl ? ttlFields(threadId, ttl, Date.parse(now)) : {}),
  };
  // Keys as they are: a key with a dot is one entry, not a path (an empty key is a 422, storeLimitError).
  const setIn = { metadata };
  if (!(await threads.update({ scope: d.scope, thread: threadId }, { set, setIn })))
    throw new NotFound(`Thread with ID ${threadId} not found`);
  return getThread(d, threadId);
}

export async function deleteThreadRecord(d: AgentDeployment, threadId: string): Promise<void> {
  await threads.delete({ scope: d.scope, thread: threadId });
  await d.checkpointer().deleteThread(threadId);
}

/** Binds a thread to the graph its first run used (the state endpoints need it). */
export async function bindGraph(d: AgentDeployment, threadId: string, graphId: string, assistantId: string) {
  await threads.update(
    { scope: d.scope, thread: threadId },
    {
      set: { graph_id: graphId, "metadata.graph_id": graphId, "metadata.assistant_id": assistantId },
    },
  );
}

export interface ThreadQuery {
  ids?: string[];
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
  status?: ThreadStatus;
  limit?: number;
  offset?: number;
  sort_by?: "thread_id" | "status" | "created_at" | "updated_at" | "state_updated_at";
  /** Custom auth's filters on metadata (auth-scope.ts): only the threads the user may see. */
  auth?: AuthFilters;
  sort_order?: "asc" | "desc";
}

/** The id of every thread of a deployment (one Query, keys only). */
export const threadIds = async (d: AgentDeployment): Promise<string[]> =>
  (
    await queryAll<Pick<ThreadRecord, "SK">>("main", {
      KeyConditionExpression: "PK = :pk",
      values: { ":pk": agentKeys.threadsPk(d.scope) },
      ProjectionExpression: "SK",
      ConsistentRead: true,
    })
  ).map((t) => t.SK);

// Searches read the deployment's threads a Query page at a time (each at most 1 MB), filtered here, so memory is
// bounded by a page plus the page of results asked for — not by the deployment's thread count. A GSI per
// status/metadata key would be the step up in reads at scale.
const matches = (q: ThreadQuery, ids: Set<string> | undefined) => (i: ThreadRecord) =>
  (!ids || ids.has(i.thread_id)) &&
  (!q.status || i.status === q.status) &&
  (!q.metadata || contains(i.metadata ?? {}, q.metadata)) &&
  (!q.values || contains(i.values ?? {}, q.values)) &&
  matchesAuthFilters(i.metadata, q.auth);

/** The threads of a deployment matching `q`, one Query page at a time. */
export async function* matchingThreads(d: AgentDeployment, q: ThreadQuery): AsyncGenerator<ThreadRecord[]> {
  const keep = matches(q, q.ids ? new Set(q.ids) : undefined);
  for await (const page of threads.pages(agentKeys.threadsPk(d.scope), { consistent: true }))
    yield page.filter(keep);
}

export async function searchThreads(
  d: AgentDeployment,
  q: ThreadQuery,
): Promise<{ threads: Thread[]; total: number }> {
  const by = q.sort_by ?? "created_at";
  const dir = (q.sort_order ?? "desc") === "asc" ? 1 : -1;
  const offset = q.offset ?? 0;
  const limit = q.limit ?? 10;
  // The best offset + limit matches so far, by sort value then id (a stable order): ids only, so a deep page
  // costs a few bytes per skipped thread; the page's records are read again at the end.
  type Entry = { id: string; at: string };
  const order = (a: Entry, b: Entry) =>
    (a.at < b.at ? -dir : a.at > b.at ? dir : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  let best: Entry[] = [];
  let total = 0;
  for await (const page of matchingThreads(d, q)) {
    total += page.length;
    best.push(...page.map((t) => ({ id: t.thread_id, at: String(t[by] ?? "") })));
    best.sort(order);
    if (best.length > offset + limit) best = best.slice(0, offset + limit);
  }
  const ids = best.slice(offset).map((e) => e.id);
  const found = new Map(
    (
      await batchGet<ThreadRecord>(
        "main",
        ids.map((id) => threads.key({ scope: d.scope, thread: id })),
      )
    ).map((t) => [t.thread_id, t]),
  );
  // A thread deleted since it was counted is left out of the page.
  const page = ids.map((id) => found.get(id)).filter((t): t is ThreadRecord => t !== undefined);
  return { threads: page.map(toThread), total };
}

export async function countThreads(d: AgentDeployment, q: ThreadQuery): Promise<number> {
  let n = 0;
  for await (const page of matchingThreads(d, q)) n += page.length;
  return n;
}

/** Copies a thread: a new record with the same metadata and a copy of every checkpoint. */
export async function copyThread(d: AgentDeployment, threadId: string): Promise<Thread> {
  const from = await getThreadItem(d, threadId);
  if (!from) throw new NotFound(`Thread with ID ${threadId} not found`);
  const now = isoNow();
  const toId = crypto.randomUUID();
  await d.checkpointer().copyThread(threadId, toId);
  const item: ThreadRecord = {
    ...from,
    ...threads.key({ scope: d.scope, thread: toId }),
    thread_id: toId,
    created_at: now,
    updated_at: now,
    status: from.status === "busy" ? "idle" : from.status,
  };
  delete item.active_run;
  delete item.queued;
  await threads.put(item);
  return toThread(item);
}
