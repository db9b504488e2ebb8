import { NotFound } from "../errors.ts";
import { findChannel } from "./broker.ts";
import type { AgentDeployment } from "./context.ts";
import { batchWrite } from "./ddb-batch.ts";
import { deleteEventLog } from "./event-log.ts";
import { ACTIVE, cancelRun, runKey, threadRuns } from "./runs.ts";
import { deleteThreadRecord, getThreadItem } from "./threads.ts";

// Deleting a thread: its active runs are interrupted (and awaited) first, then runs, events and checkpoints go.
export async function deleteThread(d: AgentDeployment, threadId: string): Promise<void> {
  if (!(await getThreadItem(d, threadId))) throw new NotFound(`Thread ${threadId} not found`);
  const active = await threadRuns(d, threadId, ACTIVE);
  await Promise.all(active.map((r) => cancelRun(d, r, "interrupt")));
  await Promise.all(active.map((r) => findChannel(r.run_id)?.wait()));
  const runs = await threadRuns(d, threadId);
  await Promise.all(runs.map((r) => deleteEventLog(d.scope, r.run_id)));
  await batchWrite(
    "main",
    runs.map((r) => ({ delete: runKey(d.scope, threadId, r.run_id) })),
  );
  await deleteThreadRecord(d, threadId);
}
