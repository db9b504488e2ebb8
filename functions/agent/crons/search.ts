import { cronSearch, deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/runs/crons/search: filter by assistant, thread, enabled, metadata; sort and page.
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: cronSearch,
  handle: ({ params, body, server, caller }) => server.crons.search(caller, params.deployment_id, body),
});
