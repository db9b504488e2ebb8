import type { TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { CREATE_ONLY, cancelCodes, toItem, transact } from "../../aws/ddb.ts";
import { config } from "../../config.ts";
import { NotFound } from "../../errors.ts";
import { type RunRecord, runs, type ThreadRecord, threads } from "../../records/agent.ts";
import { tableName } from "../../tables.ts";
import { isoNow } from "../../time.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { workerOf } from "./settings.ts";

// The thread lock and queue: one run executes per thread at a time. Every write of the protocol is here.
// - A thread holds `active_run` (+ `active_attempt`, for fencing) while a run executes; claiming a run takes
//   it in the same transaction that moves the run pending → running with a lease; finishing releases it.
// - A thread counts its pending runs in `queued`: the write that stores a pending run adds one, claiming or
//   cancelling it takes one off, the sweeper's retry adds one back. So a new run on a free thread with nothing
//   queued is stored already running (`storeStarted`), and a finished run releases a thread with nothing queued
//   without a look for more (`release` with `idle`). The count only ever errs high; `mendQueued` fixes it.
const T = "main" as const;
/** The attempt a worker executes: its lease, writes and release are fenced on it. */
export const attemptOf = (run: Pick<RunRecord, "attempt">): number => run.attempt ?? 1;
const threadOf = (d: AgentDeployment, run: Pick<RunRecord, "thread_id">) => ({
  scope: d.scope,
  thread: run.thread_id,
});

/**
 * Stores a new run as running and takes the thread's lock, in one transaction that holds only while the
 * thread exists, is free, has no queued run and is bound to the run's graph or to none (a first run binds
 * it, as bindGraph does); undefined when it does not (the run then takes the general way).
 */
export async function storeStarted(
  d: AgentDeployment,
  item: RunRecord,
  rg: { graph_id: string; assistant_id: string },
): Promise<RunRecord | undefined> {
  const run: RunRecord = {
    ...item,
    status: "running",
    lease_until: Date.now() + config.agent.runLeaseMs,
    worker: workerOf(d),
  };
  const lock = {
    TableName: tableName(T),
    Key: toItem(threads.key({ scope: d.scope, thread: item.thread_id })),
    UpdateExpression:
      "SET active_run = :run, active_attempt = :attempt, #status = :busy, updated_at = :now, graph_id = :g, " +
      "#md.graph_id = :g, " +
      "#md.assistant_id = if_not_exists(#md.assistant_id, :a)",
    ConditionExpression:
      "attribute_exists(PK) AND attribute_not_exists(active_run) AND NOT (queued > :zero) AND " +
      "(attribute_not_exists(graph_id) OR graph_id = :g)",
    ExpressionAttributeNames: { "#status": "status", "#md": "metadata" },
    ExpressionAttributeValues: toItem({
      ":run": item.run_id,
      ":attempt": item.attempt ?? 1,
      ":busy": "busy",
      ":now": isoNow(),
      ":g": rg.graph_id,
      ":a": rg.assistant_id,
      ":zero": 0,
    }),
  };
  try {
    await transact([{ Put: runs.putInput(run) }, { Update: lock }]);
    return run;
  } catch (err) {
    if (cancelCodes(err)) return undefined;
    throw err;
  }
}

/** A run `storePending` did not store: its id was taken, or a write given to hold with it did not hold. */
export class RunNotStored extends Error {}

/**
 * Stores a new pending run (create-only: a run id is stored once) and counts it in its thread's `queued` — or,
 * with `newThread`, stores its thread with it, counted — in one transaction, with the `alongside` writes that
 * must hold with it (a cron tick's move-on). A thread that is gone is a 404; a taken run id or an alongside
 * write that did not hold is `RunNotStored`.
 */
export async function storePending(
  d: AgentDeployment,
  item: RunRecord,
  opts: { newThread?: ThreadRecord; alongside?: TransactWriteItem[] } = {},
): Promise<void> {
  const thread: TransactWriteItem = opts.newThread
    ? { Put: threads.putInput({ ...opts.newThread, queued: 1 }, CREATE_ONLY) }
    : { Update: threads.updateInput(threadOf(d, item), { add: { queued: 1 } }) };
  const alongside = opts.alongside ?? [];
  try {
    await transact([{ Put: runs.putInput(item, CREATE_ONLY) }, thread, ...alongside]);
  } catch (err) {
    const failed = cancelCodes(err)?.map((c) => c === "ConditionalCheckFailed");
    if (!failed) throw err;
    // The thread's update holds only while the thread exists (a conflict that outlasted retries is thrown on).
    if (failed[1] && !opts.newThread) throw new NotFound(`Thread with ID ${item.thread_id} not found`);
    if (failed.some(Boolean)) throw new RunNotStored(`Run ${item.run_id} was not stored`);
    throw err;
  }
}

/**
 * A pending run leaves the queue (deleted, or marked interrupted) with the thread's `queued` count; false
 * when the run was no longer pending. A thread already gone only loses the run.
 */
export async function leaveQueue(
  d: AgentDeployment,
  run: RunRecord,
  op:
    | { Delete: NonNullable<TransactWriteItem["Delete"]> }
    | { Update: NonNullable<TransactWriteItem["Update"]> },
): Promise<boolean> {
  const uncount = threads.updateInput(threadOf(d, run), { add: { queued: -1 } });
  try {
    await transact([op, { Update: uncount }]);
    return true;
  } catch (err) {
    const codes = cancelCodes(err);
    if (!codes) throw err;
    if (codes[0] === "ConditionalCheckFailed") return false;
  }
  try {
    await transact([op]);
    return true;
  } catch (err) {
    if (cancelCodes(err)) return false;
    throw err;
  }
}

/** Takes the thread's lock and starts the run with a lease; answers the lease's end, or 0 if another won. */
export async function claim(d: AgentDeployment, run: RunRecord): Promise<number> {
  const lock = threads.updateInput(threadOf(d, run), {
    set: { active_run: run.run_id, active_attempt: attemptOf(run), status: "busy", updated_at: isoNow() },
    add: { queued: -1 },
    absent: ["active_run"],
  });
  const leaseUntil = Date.now() + config.agent.runLeaseMs;
  const start = runs.updateInput(
    { ...threadOf(d, run), run: run.run_id },
    {
      set: { status: "running", updated_at: isoNow(), lease_until: leaseUntil, worker: workerOf(d) },
      when: { status: "pending" },
    },
  );
  start.ConditionExpression += " AND attribute_not_exists(cancel_action)";
  try {
    await transact([{ Update: lock }, { Update: start }]);
    return leaseUntil;
  } catch (err) {
    if (cancelCodes(err)) return 0;
    throw err;
  }
}

/** Sets the thread's pending-run count back to zero when none is pending (it only ever errs high). */
export async function mendQueued(d: AgentDeployment, threadId: string, counted: number): Promise<void> {
  await threads.update(
    { scope: d.scope, thread: threadId },
    {
      set: { queued: 0 },
      when: { queued: counted },
      absent: ["active_run"],
    },
  );
}

/**
 * The thread's release by the run's own attempt (fenced: a worker whose run was retried releases nothing of
 * the retry's). With `idle`, it holds only while nothing is queued, so the thread needs no look for more.
 */
export function release(
  d: AgentDeployment,
  run: RunRecord,
  set: Partial<ThreadRecord>,
  idle = false,
): TransactWriteItem {
  const u = threads.updateInput(threadOf(d, run), {
    set: { ...set, updated_at: isoNow() },
    when: { active_run: run.run_id, active_attempt: attemptOf(run) },
    remove: ["active_run", "active_attempt", ...(set.status === "error" ? [] : ["error"])],
    ...(idle ? { atMost: { queued: 0 } } : {}),
  });
  return { Update: u };
}

/** The sweeper's side: a dead worker's run leaves the thread free, counted as queued again unless it failed. */
export function unlockForRetry(
  d: AgentDeployment,
  item: RunRecord,
  at: string,
  failure?: string,
): TransactWriteItem {
  return {
    Update: threads.updateInput(threadOf(d, item), {
      set: failure ? { status: "error", error: failure, updated_at: at } : { status: "busy", updated_at: at },
      when: { active_run: item.run_id },
      remove: ["active_run", "active_attempt"],
      ...(failure ? {} : { add: { queued: 1 } }),
    }),
  };
}
