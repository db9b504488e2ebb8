import { callerOf, store } from "../../../shared/agent/ops/index.ts";
import {
  deploymentParams,
  storeNamespaces,
  storeNamespacesResponse,
} from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/store/namespaces: the namespaces holding items, by prefix, suffix and depth.
export const handler = defineHandler({
  params: deploymentParams,
  body: storeNamespaces,
  response: storeNamespacesResponse,
  handle: ({ params, body, tenantId }) => store.namespaces(callerOf(tenantId), params.deployment_id, body),
});
