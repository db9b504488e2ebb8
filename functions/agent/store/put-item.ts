import { storeAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { putStoreItem, storePut } from "../../../shared/agent/store-api.ts";
import { defineHandler, reply } from "../../handler.ts";

// PUT /agents/{deployment_id}/store/items: store or replace an item (with a TTL in minutes, if given).
export const handler = defineHandler({
  params: deploymentParams,
  body: storePut,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await putStoreItem(d, await storeAccess("put", body));
    return reply(204);
  },
});
