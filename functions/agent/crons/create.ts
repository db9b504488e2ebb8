import { cronCreate, deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/runs/crons: a stateless cron (each tick runs on a new thread).
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: cronCreate,
  handle: ({ params, body, server, caller }) => server.crons.create(caller, params.deployment_id, null, body),
});
