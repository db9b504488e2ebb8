import { deploymentParams, storeDelete } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// DELETE /agents/{deployment_id}/store/items: delete an item (204 whether or not it existed).
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: storeDelete,
  handle: async ({ params, body, server, caller }) => {
    await server.store.remove(caller, params.deployment_id, body);
    return reply(204);
  },
});
