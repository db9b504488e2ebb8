import { cronCount, deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/runs/crons/count
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: cronCount,
  handle: ({ params, body, server, caller }) => server.crons.count(caller, params.deployment_id, body),
});
