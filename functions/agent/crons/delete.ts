import { cronParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// DELETE /agents/{deployment_id}/runs/crons/{cron_id}: a tick in flight then finds it gone and creates nothing.
export const handler = defineAgentHandler({
  params: cronParams,
  handle: async ({ params, server, caller }) => {
    await server.crons.remove(caller, params.deployment_id, params.cron_id);
    return reply(204);
  },
});
