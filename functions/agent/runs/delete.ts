import { runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// DELETE /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}: a finished run (an active one → 409).
export const handler = defineAgentHandler({
  params: runParams,
  handle: async ({ params, server, caller }) => {
    await server.runs.remove(caller, params.deployment_id, params.thread_id, params.run_id);
    return reply(204);
  },
});
