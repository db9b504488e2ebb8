import { storeAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import {
  listStoreNamespaces,
  storeNamespaces,
  storeNamespacesResponse,
} from "../../../shared/agent/store-api.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/store/namespaces: the namespaces holding items, by prefix, suffix and depth.
export const handler = defineHandler({
  params: deploymentParams,
  body: storeNamespaces,
  response: storeNamespacesResponse,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { prefix, ...rest } = body;
    const { namespace, ...seen } = await storeAccess("list_namespaces", { namespace: prefix, ...rest });
    return listStoreNamespaces(d, { ...seen, prefix: namespace });
  },
});
