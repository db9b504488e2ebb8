import { callerOf, crons } from "../../../shared/agent/ops/index.ts";
import { cronParams, cronPatch } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// PATCH /agents/{deployment_id}/runs/crons/{cron_id}: schedule, end_time, enabled, metadata, payload fields.
export const handler = defineHandler({
  params: cronParams,
  body: cronPatch,
  handle: ({ params, body, tenantId }) =>
    crons.update(callerOf(tenantId), params.deployment_id, params.cron_id, body),
});
