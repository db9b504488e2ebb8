import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { cancelQuery, deploymentParams, runsCancel } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/cancel?wait&action=interrupt|rollback: cancel a thread's, listed or all
// pending/running runs.
export const handler = defineHandler({
  params: deploymentParams,
  query: cancelQuery,
  body: runsCancel,
  handle: async ({ params, query, body, tenantId }) => {
    await runs.cancelMany(callerOf(tenantId), params.deployment_id, body, query.action, query.wait);
    return reply(query.wait ? 204 : 202);
  },
});
