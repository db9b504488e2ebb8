import { deploymentParams, storePut } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// PUT /agents/{deployment_id}/store/items: store or replace an item (with a TTL in minutes, if given).
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: storePut,
  handle: async ({ params, body, server, caller }) => {
    await server.store.put(caller, params.deployment_id, body);
    return reply(204);
  },
});
