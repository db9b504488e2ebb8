import { sweepExpiredThreads } from "../../shared/agent/cleanup/thread-ttl.ts";
import { moveAgentIndexEntries } from "../../shared/agent/runs/agent-index.ts";
import { sweepRuns } from "../../shared/agent/runs/sweeper.ts";
import { config } from "../../shared/config.ts";
import { platformAgentServer, platformHost } from "../agent/platform.ts";
import { defineTask } from "../task-manifest.ts";

// Re-drives agent runs no worker is doing: dead workers' runs (retried) and due delayed runs; and deletes the
// threads whose TTL ran out. In AWS a schedule runs it every minute; the local cloud runs it at start-up and
// then again whenever a lease it saw runs out, a delayed run it saw falls due or a thread's TTL runs out.
let timer: NodeJS.Timeout | undefined;
export const handler = defineTask("AgentRunSweeper", async () => {
  // In AWS the entries a table of an earlier version holds move on the next sweeps (locally: at start).
  if (!config.localMode) await moveAgentIndexEntries();
  const runs = await sweepRuns(platformHost, platformAgentServer.clock());
  const threads = await sweepExpiredThreads();
  const result = {
    ...runs,
    threadsDeleted: threads.deleted,
    threadsDeferred: threads.deferred,
    nextCheck: Math.min(
      runs.nextCheck ?? Number.POSITIVE_INFINITY,
      threads.nextCheck ?? Number.POSITIVE_INFINITY,
    ),
  };
  if (config.localMode) {
    // Again when a lease it saw runs out, and at least once a lease period (a lease taken after this sweep).
    const next = Math.min(result.nextCheck ?? Number.POSITIVE_INFINITY, Date.now() + config.agent.runLeaseMs);
    clearTimeout(timer);
    timer = setTimeout(() => void handler().catch(() => {}), Math.max(next - Date.now(), 0) + 100).unref();
  }
  return result;
});
