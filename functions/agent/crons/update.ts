import { cronParams, cronPatch } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// PATCH /agents/{deployment_id}/runs/crons/{cron_id}: schedule, end_time, enabled, metadata, payload fields.
export const handler = defineAgentHandler({
  params: cronParams,
  body: cronPatch,
  handle: ({ params, body, server, caller }) =>
    server.crons.update(caller, params.deployment_id, params.cron_id, body),
});
