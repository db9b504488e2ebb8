import { batchWrite } from "../../aws/batch.ts";
import { NotFound } from "../../errors.ts";
import { runs } from "../../records/agent.ts";
import { deleteThreadCrons } from "../crons/crons.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { ACTIVE, cancelRun, runEnded, threadRuns } from "../runs/runs.ts";
import { deleteEventLog } from "../stream/event-log.ts";
import { deleteThreadRecord, getThreadItem } from "../threads/threads.ts";

// Deleting a thread: its active runs are interrupted (and awaited) first, then runs, events and checkpoints go.
export async function deleteThread(d: AgentDeployment, threadId: string): Promise<void> {
  if (!(await getThreadItem(d, threadId))) throw new NotFound(`Thread with ID ${threadId} not found`);
  const active = await threadRuns(d, threadId, ACTIVE);
  await Promise.all(active.map((r) => cancelRun(d, r, "interrupt")));
  await Promise.all(active.map((r) => runEnded(d, threadId, r.run_id)));
  const all = await threadRuns(d, threadId);
  await Promise.all(all.map((r) => deleteEventLog(d.scope, r.run_id)));
  await batchWrite(
    "main",
    all.map((r) => ({ delete: runs.key({ scope: d.scope, thread: threadId, run: r.run_id }) })),
  );
  await deleteThreadCrons(d, threadId);
  await deleteThreadRecord(d, threadId);
}

/** How long the record of an ended stateless run stays for waiters in other processes (then DynamoDB's TTL). */
const STATELESS_RECORD_TTL_S = 3600;

/**
 * Deletes a stateless run's temporary thread once its runs ended (on_completion "delete"), with everything under
 * it: run records, event logs, checkpoints with their writes, values and S3 parts, the thread record. Only a run
 * whose waiters are elsewhere (`keep`: no live channel here, they poll its record for the final values) keeps
 * its record and event log a while: the record expires by DynamoDB's TTL, the log by its own.
 */
export async function deleteStatelessThread(
  d: AgentDeployment,
  threadId: string,
  keep?: string,
): Promise<void> {
  if ((await threadRuns(d, threadId, ACTIVE)).length) return;
  const all = await threadRuns(d, threadId);
  const gone = all.filter((r) => r.run_id !== keep);
  await Promise.all(gone.map((r) => deleteEventLog(d.scope, r.run_id)));
  await batchWrite(
    "main",
    gone.map((r) => ({ delete: runs.key({ scope: d.scope, thread: threadId, run: r.run_id }) })),
  );
  if (keep)
    await runs.update(
      { scope: d.scope, thread: threadId, run: keep },
      { set: { expires_at: Math.floor(Date.now() / 1000) + STATELESS_RECORD_TTL_S } },
    );
  await deleteThreadRecord(d, threadId);
}

/**
 * Prunes threads: `delete` deletes each as DELETE /threads/{id} does; `keep_latest` keeps each thread and its
 * latest state but deletes every older checkpoint. Ids of missing threads are skipped. Answers how many were pruned.
 */
export async function pruneThreads(
  d: AgentDeployment,
  threadIds: string[],
  strategy: "delete" | "keep_latest",
): Promise<number> {
  let pruned = 0;
  for (const threadId of new Set(threadIds)) {
    if (!(await getThreadItem(d, threadId))) continue;
    if (strategy === "keep_latest") await d.checkpointer().keepLatest(threadId);
    else
      try {
        await deleteThread(d, threadId);
      } catch (err) {
        if (err instanceof NotFound) continue; // deleted meanwhile
        throw err;
      }
    pruned++;
  }
  return pruned;
}
