import { storeAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { deleteStoreItem, storeDelete } from "../../../shared/agent/store-api.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/store/items: delete an item (204 whether or not it existed).
export const handler = defineHandler({
  params: deploymentParams,
  body: storeDelete,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await deleteStoreItem(d, await storeAccess("delete", body));
    return reply(204);
  },
});
