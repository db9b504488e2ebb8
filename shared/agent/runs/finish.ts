import { cancelCodes, toItem, transact } from "../../aws/ddb.ts";
import { groupPut } from "../../aws/group-write.ts";
import { type EventChunkRecord, type RunRecord, runs, type ThreadRecord } from "../../records/agent.ts";
import { tableName } from "../../tables.ts";
import { isoNow } from "../../time.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import type { RunOutcome } from "../stream/broker.ts";
import { deleteEventLog } from "../stream/event-log.ts";
import { executor } from "./executor.ts";
import { attemptOf, release } from "./thread-lock.ts";

// A run's end, apart from the worker that executes graphs: the run sweeper finishes dead workers' cancelled runs
// too, and its bundle must not load the graph libraries for that.
const T = "main" as const;
/** Values copied into a record (the thread's, the run's final values) at most this many UTF-8 bytes as JSON. */
export const MAX_VALUES_BYTES = 200_000;
export const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v ?? null));

/** Frames that may join the run's final transaction (DynamoDB: 100 items, 4 MB a transaction). */
const MAX_FRAME_ITEMS = 20;
const MAX_FRAME_BYTES = 2_000_000;

/** What a run's record loses when it ends: its lease and its entry in the active-runs index. */
const ENDED = ["lease_until", "worker", "AGENT1PK", "AGENT1SK"];

/**
 * Writes the run's final status and releases the thread, or carries out a cancel that arrived meanwhile.
 * `more` says whether the thread may have queued runs to start next: the release first tries on the
 * condition that the thread's `queued` count is zero, so a thread with nothing waiting needs no look.
 */
export async function finish(
  d: AgentDeployment,
  run: RunRecord,
  outcome: RunOutcome,
  threadSet: Partial<ThreadRecord>,
  frames: EventChunkRecord[] = [],
  cancelAction?: string,
): Promise<{ outcome: RunOutcome; more: boolean }> {
  const rk = { scope: d.scope, thread: run.thread_id, run: run.run_id };
  // The run's last stream frames ride in the final transaction when they fit (else they go first).
  const bytes = frames.reduce((n, f) => n + Buffer.byteLength(String(f.frames ?? "")), 0);
  const ride = frames.length <= MAX_FRAME_ITEMS && bytes <= MAX_FRAME_BYTES ? frames : [];
  if (!ride.length) await groupPut(T, frames);
  const framePuts = () => ride.map((f) => ({ Put: { TableName: tableName(T), Item: toItem(f) } }));
  const unlock = (set: Partial<ThreadRecord>, idle = false) => release(d, run, set, idle);
  if (outcome.status !== "cancelled") {
    const final = executor().settlesBeforeReturn && jsonBytes(outcome.values) <= MAX_VALUES_BYTES;
    const done = runs.updateInput(rk, {
      set: {
        status: outcome.status,
        updated_at: isoNow(),
        ...(final ? { final_values: outcome.values } : {}),
      },
      when: { status: "running", attempt: attemptOf(run) },
      remove: ENDED,
    });
    done.ConditionExpression += " AND attribute_not_exists(cancel_action)";
    for (const idle of [true, false]) {
      try {
        await transact([{ Update: done }, unlock(threadSet, idle), ...framePuts()]);
        return { outcome, more: !idle };
      } catch (err) {
        const codes = cancelCodes(err);
        if (!codes) throw err;
        // The run's own condition failed: a cancel arrived.
        if (codes[0] === "ConditionalCheckFailed") break;
      }
    }
  }
  const action = cancelAction ?? (await runs.get(rk))?.cancel_action ?? "interrupt";
  if (action === "rollback") {
    // The run's checkpoints go before its record, so nobody sees a deleted run's state.
    const saver = d.checkpointer();
    await saver.afterRunWrites(run.run_id, () => saver.deleteByRunId(run.thread_id, run.run_id));
    await transact([
      { Delete: runs.deleteInput(rk) },
      unlock({ status: "idle", state_updated_at: isoNow() }),
    ]);
    await deleteEventLog(d.scope, run.run_id);
    return { outcome: { status: "deleted" }, more: true };
  }
  const done = runs.updateInput(rk, {
    set: { status: "interrupted", updated_at: isoNow() },
    when: { status: "running", attempt: attemptOf(run) },
    remove: ENDED,
  });
  await transact([{ Update: done }, unlock({ status: "idle" }), ...framePuts()]);
  return { outcome: { status: "interrupted" }, more: true };
}
