import { agentDeployment } from "../../../shared/agent/context.ts";
import { cancelQuery, deploymentParams, runsCancel } from "../../../shared/agent/run-schemas.ts";
import { cancelRuns } from "../../../shared/agent/runs-bulk.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/cancel?wait&action=interrupt|rollback: cancel a thread's, listed or all
// pending/running runs.
export const handler = defineHandler({
  params: deploymentParams,
  query: cancelQuery,
  body: runsCancel,
  handle: async ({ params, query, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await cancelRuns(d, body, query.action, query.wait);
    return reply(query.wait ? 204 : 202);
  },
});
