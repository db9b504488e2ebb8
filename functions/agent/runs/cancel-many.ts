import { authorize } from "../../../shared/agent/auth-scope.ts";
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
    const auth = await authorize("threads:update", { thread_id: body.thread_id, action: query.action });
    await cancelRuns(d, { ...body, auth }, query.action, query.wait);
    return reply(query.wait ? 204 : 202);
  },
});
