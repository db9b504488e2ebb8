import { callerOf, store } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, storeGet, storeItemResponse } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/store/items?namespace=a.b&key=k: the item, or null (as the reference server answers).
export const handler = defineHandler({
  params: deploymentParams,
  query: storeGet,
  response: storeItemResponse,
  handle: ({ params, query, tenantId }) => store.get(callerOf(tenantId), params.deployment_id, query),
});
