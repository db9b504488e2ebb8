import { deploymentParams, storeSearch, storeSearchResponse } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/store/items/search: items under a namespace prefix, filtered, paged.
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: storeSearch,
  response: storeSearchResponse,
  handle: ({ params, body, server, caller }) => server.store.search(caller, params.deployment_id, body),
});
