import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { deleteStoreItem, storeDelete } from "../../../shared/agent/store-api.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/store/items: delete an item (204 whether or not it existed).
export const handler = defineHandler({
  params: deploymentParams,
  body: storeDelete,
  handle: async ({ params, body, tenantId }) => {
    await deleteStoreItem(await agentDeployment(tenantId, params.deployment_id), body);
    return reply(204);
  },
});
