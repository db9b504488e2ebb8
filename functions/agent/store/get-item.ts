import { storeAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { getStoreItem, storeGet, storeItemResponse } from "../../../shared/agent/store-api.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/store/items?namespace=a.b&key=k: the item, or null (as the reference server answers).
export const handler = defineHandler({
  params: deploymentParams,
  query: storeGet,
  response: storeItemResponse,
  handle: async ({ params, query, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    return getStoreItem(d, await storeAccess("get", query));
  },
});
