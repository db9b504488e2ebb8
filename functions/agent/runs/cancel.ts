import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { cancelQuery, runParams } from "../../../shared/agent/run-schemas.ts";
import { cancelRunById } from "../../../shared/agent/runs.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/cancel?wait&action=interrupt|rollback
export const handler = defineHandler({
  params: runParams,
  query: cancelQuery,
  handle: async ({ params, query, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "update", { action: query.action });
    await cancelRunById(d, params.thread_id, params.run_id, query.action, query.wait);
    return reply(query.wait ? 204 : 202);
  },
});
