import { callerOf, crons } from "../../../shared/agent/ops/index.ts";
import { cronParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/runs/crons/{cron_id}: a tick in flight then finds it gone and creates nothing.
export const handler = defineHandler({
  params: cronParams,
  handle: async ({ params, tenantId }) => {
    await crons.remove(callerOf(tenantId), params.deployment_id, params.cron_id);
    return reply(204);
  },
});
