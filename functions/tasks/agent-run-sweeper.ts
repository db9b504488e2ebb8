import { sweepRuns } from "../../shared/agent/sweeper.ts";
import { config } from "../../shared/config.ts";
import { defineTask } from "../task-manifest.ts";

// Re-drives agent runs no worker is doing: dead workers' runs (retried) and due delayed runs. In AWS a
// schedule runs it every minute; the local cloud runs it at start-up and then again whenever a lease it saw
// runs out or a delayed run it saw falls due.
let timer: NodeJS.Timeout | undefined;
export const handler = defineTask("AgentRunSweeper", async () => {
  const result = await sweepRuns();
  if (!config.lambda.functionName) {
    // Again when a lease it saw runs out, and at least once a lease period (a lease taken after this sweep).
    const next = Math.min(result.nextCheck ?? Number.POSITIVE_INFINITY, Date.now() + config.agent.runLeaseMs);
    clearTimeout(timer);
    timer = setTimeout(() => void handler().catch(() => {}), Math.max(next - Date.now(), 0) + 100).unref();
  }
  return result;
});
