import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, runBatch } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/batch: several stateless background runs in one call (answered in order).
export const handler = defineHandler({
  params: deploymentParams,
  body: runBatch,
  handle: ({ params, body, tenantId }) => runs.createBatch(callerOf(tenantId), params.deployment_id, body),
});
