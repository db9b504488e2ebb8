import { callerOf, crons } from "../../../shared/agent/ops/index.ts";
import { cronCreate, deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/crons: a stateless cron (each tick runs on a new thread).
export const handler = defineHandler({
  params: deploymentParams,
  body: cronCreate,
  handle: ({ params, body, tenantId }) => crons.create(callerOf(tenantId), params.deployment_id, null, body),
});
