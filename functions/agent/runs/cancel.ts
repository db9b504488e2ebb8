import { cancelQuery, runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/cancel?wait&action=interrupt|rollback
export const handler = defineAgentHandler({
  params: runParams,
  query: cancelQuery,
  handle: async ({ params, query, server, caller }) => {
    const { deployment_id, thread_id, run_id } = params;
    await server.runs.cancel(caller, deployment_id, thread_id, run_id, query.action, query.wait);
    return reply(query.wait ? 204 : 202);
  },
});
