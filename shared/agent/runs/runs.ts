import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import type { z } from "zod";
import { toItem } from "../../aws/ddb.ts";
import { Conflict, NotFound } from "../../errors.ts";
import { uuidv7 } from "../../ids.ts";
import { ACTIVE_RUNS, agentKeys, type RunRecord, type RunStatus, runs } from "../../records/agent.ts";
import { shardKey } from "../../records/shard.ts";
import { isoNow } from "../../time.ts";
import { authConfigurable } from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { openChannel } from "../stream/broker.ts";
import { deleteEventLog } from "../stream/event-log.ts";
import { bindGraph, createThread, getThreadItem, newThreadRecord } from "../threads/threads.ts";
import { graphFor, type RunGraph } from "./assistant.ts";
import { type CancelAction, executor } from "./executor.ts";
import type { runCreate } from "./schemas.ts";
import { leaveQueue, storePending, storeStarted } from "./thread-lock.ts";

// Runs (records and keys: shared/records/agent.ts; run ids are UUIDv7, so a thread's runs sort by creation).
// Every status change is a conditional write on the expected current status; cancellation is the
// `cancel_action` flag, which the worker honours (in-process at once via the run's AbortController).
export const ACTIVE: readonly RunStatus[] = ["pending", "running"];

/** A run-create body as validated (`runCreate` in run-schemas.ts is its one definition). */
export type RunCreate = z.output<typeof runCreate>;

const PRIVATE = [
  "PK",
  "SK",
  "AGENT1PK",
  "AGENT1SK",
  "graph_id",
  "cancel_action",
  "not_before",
  "attempt",
  "stateless",
  "lease_until",
  "worker",
  "final_values",
] as const;
/** A run as the API shows it: its record without the keys and the worker's bookkeeping. */
export type Run = Omit<RunRecord, (typeof PRIVATE)[number]>;

export function toRun(item: RunRecord): Run {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) if (!(PRIVATE as readonly string[]).includes(k)) out[k] = v;
  return out as unknown as Run;
}

export async function getRunItem(
  d: AgentDeployment,
  threadId: string,
  runId: string,
): Promise<RunRecord | undefined> {
  return runs.get({ scope: d.scope, thread: threadId, run: runId });
}

export async function getRun(d: AgentDeployment, threadId: string, runId: string): Promise<Run> {
  const item = await getRunItem(d, threadId, runId);
  if (!item) throw new NotFound(`Run ${runId} not found`);
  return toRun(item);
}

export async function threadRuns(
  d: AgentDeployment,
  threadId: string,
  status?: readonly string[],
): Promise<RunRecord[]> {
  const items = await runs.list(agentKeys.runsPk(d.scope, threadId), { consistent: true });
  return status ? items.filter((i) => status.includes(i.status)) : items;
}

export async function listRuns(
  d: AgentDeployment,
  threadId: string,
  q: { limit?: number; offset?: number; status?: string },
): Promise<Run[]> {
  if (!(await getThreadItem(d, threadId))) throw new NotFound(`Thread with ID ${threadId} not found`);
  const items = (await threadRuns(d, threadId, q.status ? [q.status] : undefined)).reverse();
  const offset = q.offset ?? 0;
  return items.slice(offset, offset + (q.limit ?? 10)).map(toRun);
}

/** LangGraph's deprecated checkpoint_during as the durability it stands for. */
const durabilityOf = (during: boolean | undefined) =>
  during === undefined ? undefined : during ? ("async" as const) : ("exit" as const);

const modesOf = (m: RunCreate["stream_mode"]) => (m === undefined ? ["values"] : Array.isArray(m) ? m : [m]);

/**
 * A new pending run's record from a run-create body: the one place a run record is made (a request's run, a
 * cron's tick). `overrides` set what the body does not decide (a tick's run has no client to disconnect).
 */
/** A run's config with its user (custom auth), where the reference server puts it for the graph. */
function withAuthUser(
  config: RunCreate["config"],
  auth: Record<string, unknown> = authConfigurable(),
): RunCreate["config"] {
  if (!Object.keys(auth).length) return config;
  return { ...(config ?? {}), configurable: { ...(config?.configurable ?? {}), ...auth } };
}

/** What a run's record takes besides its body (a tick's run has no client to disconnect). */
export interface RunOverrides {
  on_disconnect?: "cancel" | "continue";
  on_completion?: "delete" | "keep";
  metadata?: Record<string, unknown>;
  /** The user's keys the run carries (a cron's creator); by default the current request's user's. */
  runAs?: Record<string, unknown>;
}

export function newRunRecord(
  d: AgentDeployment,
  run: { threadId: string; runId: string; at: string; stateless: boolean; rg: RunGraph },
  body: RunCreate,
  overrides: RunOverrides = {},
): RunRecord {
  const { threadId, runId, at, stateless, rg } = run;
  return {
    ...runs.key({ scope: d.scope, thread: threadId, run: runId }),
    run_id: runId,
    thread_id: threadId,
    assistant_id: rg.assistant_id,
    graph_id: rg.graph_id,
    created_at: at,
    updated_at: at,
    status: "pending",
    metadata: { ...(body.metadata ?? {}), ...(overrides.metadata ?? {}) },
    multitask_strategy: body.multitask_strategy ?? "enqueue",
    attempt: 1,
    // Active runs are listed in a sparse index, so the sweeper finds runs a dead worker left behind.
    AGENT1PK: shardKey(ACTIVE_RUNS, runId),
    AGENT1SK: `${d.scope}#${threadId}#${runId}`,
    kwargs: {
      input: body.input,
      command: body.command ?? undefined,
      config: withAuthUser(body.config, overrides.runAs),
      context: body.context,
      stream_mode: modesOf(body.stream_mode),
      stream_subgraphs: body.stream_subgraphs ?? false,
      ...(body.stream_resumable === false ? { stream_resumable: false } : {}),
      interrupt_before: body.interrupt_before,
      interrupt_after: body.interrupt_after,
      checkpoint_id: body.checkpoint_id ?? (body.checkpoint?.checkpoint_id as string | undefined),
      checkpoint: body.checkpoint,
      on_disconnect: overrides.on_disconnect ?? body.on_disconnect ?? (stateless ? "cancel" : "continue"),
      on_completion: overrides.on_completion ?? body.on_completion ?? (stateless ? "delete" : "keep"),
      webhook: body.webhook,
      durability: body.durability ?? durabilityOf(body.checkpoint_during),
      ...(body.strict_resume ? { strict_resume: true } : {}),
      assistant_config: rg.config,
      assistant_context: rg.context,
    },
  };
}

/** How a run is created besides its body: what a cron's tick gives (its ids, its time, its cron's move-on). */
export interface RunOptions {
  /** Metadata for a thread the run creates (custom auth: the user's, so they find it). */
  threadMetadata?: Record<string, unknown>;
  /** The run's id (a tick's, derived from the cron and the tick): stored once, so a second store is refused. */
  runId?: string;
  /** A stateless run's thread id (a tick's): the thread is then stored in the run's own transaction. */
  threadId?: string;
  /** The run's creation time (ISO); now by default. */
  at?: string;
  /** What the body does not decide (newRunRecord). */
  overrides?: RunOverrides;
  /**
   * Writes that hold or fail with the run's (a tick's move-on of its cron): the run is then stored pending in one
   * transaction with them and its thread's count, and not stored (`RunNotStored`) when one does not hold.
   */
  alongside?: TransactWriteItem[];
}

/**
 * Creates a run (thread run, or stateless when threadId is null: a temporary thread deleted on completion).
 * Multitask strategies against the thread's active runs: reject → 409; interrupt/rollback → every older
 * active run is cancelled with that action (and a run that finds a newer interrupt/rollback run cancels
 * itself, so concurrent creates leave exactly one survivor); enqueue → waits for its turn.
 */
export async function createRun(
  d: AgentDeployment,
  threadId: string | null,
  body: RunCreate,
  kick: Kick,
  opts: RunOptions = {},
): Promise<Run> {
  const stateless = threadId === null;
  const tid = threadId ?? opts.threadId ?? crypto.randomUUID();
  const rg = await graphFor(d, body.assistant_id);
  const strategy = body.multitask_strategy ?? "enqueue";
  const now = opts.at ?? isoNow();
  const runId = opts.runId ?? uuidv7();
  const item = newRunRecord(d, { threadId: tid, runId, at: now, stateless, rg }, body, opts.overrides);
  if (body.after_seconds) item.not_before = Date.now() + body.after_seconds * 1000;
  const alongside = opts.alongside ?? [];
  // A run whose worker is in this process has its live channel here (a platform's kick starts it elsewhere).
  if (kick.startClaimed) executor().open(item.run_id);
  // With the worker in this process, a free thread with nothing queued starts the run in the same write that
  // stores it: no other run is active or waiting, so every multitask strategy agrees. (The write's conditions
  // check the thread; any other case takes the general way below.)
  const fast =
    kick.startClaimed !== undefined && executor().startsClaimedRuns && !item.not_before && !alongside.length;
  const startNow = async () => {
    const started = fast ? await storeStarted(d, item, rg) : undefined;
    if (started) kick.startClaimed!(d, started);
    return started !== undefined;
  };
  // Answered as created, as the reference answers every new run (it starts a moment later there).
  if (!stateless && (await startNow())) return toRun(item);
  const thread = stateless ? undefined : await getThreadItem(d, tid);
  const threadMetadata = { ...opts.threadMetadata, graph_id: rg.graph_id, assistant_id: rg.assistant_id };
  // A stateless run with a given thread id stores its thread in its own transaction (so a tick is one write).
  if (stateless && opts.threadId) {
    const newThread = { ...newThreadRecord(d, tid, now, threadMetadata), graph_id: rg.graph_id };
    await storePending(d, item, { newThread, alongside });
    await kick(d, tid);
    return toRun(item);
  }
  // A thread created here is bound to the run's graph as it is created.
  let boundTo = thread?.graph_id;
  if (!thread) {
    if (!stateless && body.if_not_exists !== "create") throw new NotFound(`Thread with ID ${tid} not found`);
    await createThread(d, { thread_id: tid, metadata: threadMetadata, if_exists: "do_nothing" });
    if (await startNow()) return toRun(item);
    boundTo = rg.graph_id;
  }
  if (boundTo !== rg.graph_id) await bindGraph(d, tid, rg.graph_id, rg.assistant_id);
  if (strategy === "reject" && (await threadRuns(d, tid, ACTIVE)).length)
    throw new Conflict("Thread is busy with another run; multitask_strategy is reject");
  await storePending(d, item, { alongside });
  if (strategy === "interrupt" || strategy === "rollback") {
    for (const other of await threadRuns(d, tid, ACTIVE)) {
      const theirs = other.multitask_strategy;
      if (other.run_id < item.run_id) await cancelRun(d, other, strategy);
      else if (other.run_id > item.run_id && (theirs === "interrupt" || theirs === "rollback"))
        await cancelRun(d, item, theirs);
    }
  }
  await kick(d, tid);
  return toRun(item);
}

/**
 * Starts runs. `kick` has the thread's next due run started (here or by a worker function); `startClaimed`,
 * when the worker runs in this process, executes a run `createRun` stored already running with the lock.
 */
export interface Kick {
  (d: AgentDeployment, threadId: string): void | Promise<void>;
  startClaimed?: (d: AgentDeployment, run: RunRecord) => void;
}

/**
 * Cancels a run. Pending: rollback deletes it, interrupt marks it interrupted. Running: sets `cancel_action`
 * and aborts the worker in this process (a worker elsewhere sees the flag between steps); the worker then
 * stops the graph and finishes the run as interrupted, or deletes it with its checkpoints for a rollback.
 */
export async function cancelRun(d: AgentDeployment, run: RunRecord, action: CancelAction, wait = false) {
  const key = { scope: d.scope, thread: run.thread_id, run: run.run_id };
  if (action === "rollback") {
    const removed = await leaveQueue(d, run, {
      Delete: {
        ...runs.deleteInput(key),
        ConditionExpression: "#s = :p",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: toItem({ ":p": "pending" }),
      },
    });
    if (removed) {
      await deleteEventLog(d.scope, run.run_id);
      openChannel(run.run_id).end({ status: "deleted" });
      return;
    }
  } else if (
    await leaveQueue(d, run, {
      Update: runs.updateInput(key, {
        set: { status: "interrupted", updated_at: isoNow() },
        when: { status: "pending" },
        remove: ["AGENT1PK", "AGENT1SK"],
      }),
    })
  ) {
    openChannel(run.run_id).end({ status: "interrupted" });
    return;
  }
  const flagged = await runs.update(key, {
    set: { cancel_action: action, updated_at: isoNow() },
    when: { status: "running" },
  });
  // A worker in this process is aborted at once; a worker function polls the flag (executor.ts).
  if (flagged) executor().abort(run.run_id, action);
  if (wait) await runEnded(d, run.thread_id, run.run_id);
}

/** Resolves when a run is no longer active (or gone): from the broker here, else by polling its record. */
export async function runEnded(d: AgentDeployment, threadId: string, runId: string): Promise<void> {
  const channel = executor().live(runId);
  if (channel) await channel.wait();
  else await pollRunEnd(d, threadId, runId);
}

/** Polls a run's record (backing off to 500 ms) until it ends: its final record, or undefined once it is gone. */
export async function pollRunEnd(
  d: AgentDeployment,
  threadId: string,
  runId: string,
): Promise<RunRecord | undefined> {
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    const item = await getRunItem(d, threadId, runId);
    if (!item || !ACTIVE.includes(item.status)) return item;
    await new Promise((r) => setTimeout(r, delay));
  }
}

export async function cancelRunById(
  d: AgentDeployment,
  threadId: string,
  runId: string,
  action: "interrupt" | "rollback",
  wait: boolean,
): Promise<void> {
  const item = await getRunItem(d, threadId, runId);
  if (!item) throw new NotFound(`Run ${runId} not found`);
  if (!ACTIVE.includes(item.status)) throw new Conflict(`Run ${runId} is not active (status ${item.status})`);
  await cancelRun(d, item, action, wait);
}

export async function deleteRun(d: AgentDeployment, threadId: string, runId: string): Promise<void> {
  const item = await getRunItem(d, threadId, runId);
  if (!item) throw new NotFound(`Run ${runId} not found`);
  if (ACTIVE.includes(item.status)) throw new Conflict(`Run ${runId} is still active: cancel it first`);
  await runs.delete({ scope: d.scope, thread: threadId, run: runId });
  await deleteEventLog(d.scope, runId);
}
