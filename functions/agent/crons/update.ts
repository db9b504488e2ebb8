import { cronAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { patchCron } from "../../../shared/agent/crons.ts";
import { cronParams, cronPatch } from "../../../shared/agent/crons-schemas.ts";
import { defineHandler } from "../../handler.ts";

// PATCH /agents/{deployment_id}/runs/crons/{cron_id}: schedule, end_time, enabled, metadata, payload fields.
export const handler = defineHandler({
  params: cronParams,
  body: cronPatch,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await cronAccess(d, params.cron_id, "update", body);
    return patchCron(d, params.cron_id, body);
  },
});
