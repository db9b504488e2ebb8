import { deploymentParams, storeGet, storeItemResponse } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// GET /agents/{deployment_id}/store/items?namespace=a.b&key=k: the item, or null (as the reference server answers).
export const handler = defineAgentHandler({
  params: deploymentParams,
  query: storeGet,
  response: storeItemResponse,
  handle: ({ params, query, server, caller }) => server.store.get(caller, params.deployment_id, query),
});
