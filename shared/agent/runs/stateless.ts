import { batchWrite } from "../../aws/batch.ts";
import { runs } from "../../records/agent.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { deleteEventLog } from "../stream/event-log.ts";
import { deleteThreadRecord } from "../threads/threads.ts";
import { ACTIVE, threadRuns } from "./runs.ts";

// A stateless run (POST /runs, /runs/wait, /runs/stream) runs on a temporary thread of its own, deleted with its
// runs once they ended (the worker's on_completion "delete").

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
