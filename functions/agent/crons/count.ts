import { callerOf, crons } from "../../../shared/agent/ops/index.ts";
import { cronCount, deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/crons/count
export const handler = defineHandler({
  params: deploymentParams,
  body: cronCount,
  handle: ({ params, body, tenantId }) => crons.count(callerOf(tenantId), params.deployment_id, body),
});
