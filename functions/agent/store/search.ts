import { callerOf, store } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, storeSearch, storeSearchResponse } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/store/items/search: items under a namespace prefix, filtered, paged.
export const handler = defineHandler({
  params: deploymentParams,
  body: storeSearch,
  response: storeSearchResponse,
  handle: ({ params, body, tenantId }) => store.search(callerOf(tenantId), params.deployment_id, body),
});
