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
