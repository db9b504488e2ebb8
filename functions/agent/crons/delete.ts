import { cronAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deleteCron } from "../../../shared/agent/crons.ts";
import { cronParams } from "../../../shared/agent/crons-schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/runs/crons/{cron_id}: a tick in flight then finds it gone and creates nothing.
export const handler = defineHandler({
  params: cronParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await cronAccess(d, params.cron_id, "delete");
    await deleteCron(d, params.cron_id);
    return reply(204);
  },
});
