import { callerOf, store } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, storeDelete } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/store/items: delete an item (204 whether or not it existed).
export const handler = defineHandler({
  params: deploymentParams,
  body: storeDelete,
  handle: async ({ params, body, tenantId }) => {
    await store.remove(callerOf(tenantId), params.deployment_id, body);
    return reply(204);
  },
});
