import { NotFound } from "../../errors.ts";
import { type AuthFilters, matchesAuthFilters } from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { getThreadItem, matchingThreads } from "../threads/threads.ts";
import { ACTIVE, cancelRun, threadRuns } from "./runs.ts";

// Bulk cancel (POST /runs/cancel): the runs of many threads at once. (A batch of runs: ops/runs.ts createBatch.)

export interface RunsCancel {
  thread_id?: string | null;
  run_ids?: string[] | null;
  status?: "pending" | "running" | "all" | null;
  /** Custom auth's filters: only runs of threads the user may see. */
  auth?: AuthFilters;
}

/**
 * Cancels the active runs a filter selects — filters combine: a thread's (a missing thread → 404), the listed
 * ones, those in a status (`all`, the default, is pending and running). Runs that already finished are left
 * alone. Without `thread_id` every thread of the deployment is looked at, a Query page of threads at a time
 * and 25 threads' runs at once, so a large deployment is neither loaded whole nor queried all at once.
 */
export async function cancelRuns(
  d: AgentDeployment,
  filter: RunsCancel,
  action: "interrupt" | "rollback",
  wait: boolean,
): Promise<void> {
  const statuses = !filter.status || filter.status === "all" ? ACTIVE : [filter.status];
  const named = filter.run_ids ? new Set(filter.run_ids) : undefined;
  const cancelOn = async (threadIds: string[]) => {
    for (let i = 0; i < threadIds.length; i += 25) {
      const runs = (await Promise.all(threadIds.slice(i, i + 25).map((t) => threadRuns(d, t, statuses))))
        .flat()
        .filter((r) => !named || named.has(r.run_id));
      // Pending runs first: a running run that ends starts its thread's next pending run.
      for (const status of ACTIVE) {
        const batch = runs.filter((r) => r.status === status);
        await Promise.all(batch.map((r) => cancelRun(d, r, action, wait)));
      }
    }
  };
  if (filter.thread_id) {
    const thread = await getThreadItem(d, filter.thread_id);
    if (!thread || !matchesAuthFilters(thread.metadata, filter.auth))
      throw new NotFound(`Thread with ID ${filter.thread_id} not found`);
    return cancelOn([filter.thread_id]);
  }
  for await (const page of matchingThreads(d, { auth: filter.auth }))
    await cancelOn(page.map((t) => t.thread_id));
}
