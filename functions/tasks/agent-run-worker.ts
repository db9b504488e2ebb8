import { agentDeployment } from "../../shared/agent/context.ts";
import { drainThread } from "../../shared/agent/worker.ts";

// Executes a thread's due runs (invoked asynchronously by the agent API with AGENT_RUN_WORKER=lambda).
// Leaves a minute of the function's time for the last run to finish and a successor to be invoked.
export const handler = async (
  event: { tenant_id: string; deployment_id: string; thread_id: string },
  context?: { getRemainingTimeInMillis?: () => number },
) => {
  const d = await agentDeployment(event.tenant_id, event.deployment_id);
  const remaining = context?.getRemainingTimeInMillis?.() ?? 15 * 60_000;
  await drainThread(d, event.thread_id, Date.now() + Math.max(remaining - 60_000, 10_000));
};
