import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { cancelQuery, runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/cancel?wait&action=interrupt|rollback
export const handler = defineHandler({
  params: runParams,
  query: cancelQuery,
  handle: async ({ params, query, tenantId }) => {
    const { deployment_id, thread_id, run_id } = params;
    await runs.cancel(callerOf(tenantId), deployment_id, thread_id, run_id, query.action, query.wait);
    return reply(query.wait ? 204 : 202);
  },
});
