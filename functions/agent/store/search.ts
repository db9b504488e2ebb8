import { storeAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { searchStoreItems, storeSearch, storeSearchResponse } from "../../../shared/agent/store-api.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/store/items/search: items under a namespace prefix, filtered, paged.
export const handler = defineHandler({
  params: deploymentParams,
  body: storeSearch,
  response: storeSearchResponse,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { namespace_prefix, ...rest } = body;
    const { namespace, ...seen } = await storeAccess("search", { namespace: namespace_prefix, ...rest });
    return searchStoreItems(d, { ...seen, namespace_prefix: namespace });
  },
});
