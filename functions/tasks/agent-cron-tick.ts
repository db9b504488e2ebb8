import { nextSweepAt } from "../../shared/agent/ops/index.ts";
import { config } from "../../shared/config.ts";
import { platformAgentServer } from "../agent/platform.ts";
import { defineTask } from "../task-manifest.ts";

// Fires the agent server's due cron ticks, through the platform's agent server (shared/agent/ops/crons.ts). In AWS an EventBridge Scheduler schedule
// runs it at the start of every minute (cron(* * * * ? *), UTC); the local cloud runs it at start-up and then
// re-arms a timer for just after each minute. With {tenant_id, deployment_id, cron_id, scheduled_at} it fires
// that one tick (idempotent: a tick fired twice creates one run).
export interface CronTickEvent {
  tenant_id?: string;
  deployment_id?: string;
  cron_id?: string;
  scheduled_at?: string;
}

let timer: NodeJS.Timeout | undefined;
export const handler = defineTask("AgentCronTick", async (event: CronTickEvent | undefined) => {
  if (event?.tenant_id && event.deployment_id && event.cron_id && event.scheduled_at)
    return platformAgentServer.crons.tick(
      event.tenant_id,
      event.deployment_id,
      event.cron_id,
      event.scheduled_at,
    );
  try {
    return await platformAgentServer.crons.sweep();
  } finally {
    if (config.localMode) {
      // Locally: again just after the next minute starts (also after a failed sweep).
      clearTimeout(timer);
      const now = platformAgentServer.clock();
      timer = setTimeout(() => void handler(undefined).catch(() => {}), nextSweepAt(now) - now).unref();
    }
  }
});
