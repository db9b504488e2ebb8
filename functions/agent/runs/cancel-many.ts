import { cancelQuery, deploymentParams, runsCancel } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/runs/cancel?wait&action=interrupt|rollback: cancel a thread's, listed or all
// pending/running runs.
export const handler = defineAgentHandler({
  params: deploymentParams,
  query: cancelQuery,
  body: runsCancel,
  handle: async ({ params, query, body, server, caller }) => {
    await server.runs.cancelMany(caller, params.deployment_id, body, query.action, query.wait);
    return reply(query.wait ? 204 : 202);
  },
});
