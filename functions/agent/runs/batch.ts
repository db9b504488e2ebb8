import { deploymentParams, runBatch } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/runs/batch: several stateless background runs in one call (answered in order).
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: runBatch,
  handle: ({ params, body, server, caller }) => server.runs.createBatch(caller, params.deployment_id, body),
});
