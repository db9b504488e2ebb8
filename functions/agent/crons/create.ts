import { cronCreateAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { createCron } from "../../../shared/agent/crons.ts";
import { cronCreate } from "../../../shared/agent/crons-schemas.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/crons: a stateless cron (each tick runs on a new thread).
export const handler = defineHandler({
  params: deploymentParams,
  body: cronCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await cronCreateAccess(d, null, body);
    return createCron(d, null, body);
  },
});
