import { cronCreateAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { createCron } from "../../../shared/agent/crons.ts";
import { cronCreate } from "../../../shared/agent/crons-schemas.ts";
import { threadParams } from "../../../shared/agent/run-schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/crons: a cron whose ticks run on the thread.
export const handler = defineHandler({
  params: threadParams,
  body: cronCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await cronCreateAccess(d, params.thread_id, body);
    return createCron(d, params.thread_id, body);
  },
});
