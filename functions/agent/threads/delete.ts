import { threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// DELETE /agents/{deployment_id}/threads/{thread_id}: cancels its active runs, deletes runs and checkpoints.
export const handler = defineAgentHandler({
  params: threadParams,
  handle: async ({ params, server, caller }) => {
    await server.threads.remove(caller, params.deployment_id, params.thread_id);
    return reply(204);
  },
});
