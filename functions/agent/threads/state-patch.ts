import { statePatch, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// PATCH /agents/{deployment_id}/threads/{thread_id}/state: merge metadata into the latest checkpoint's.
export const handler = defineAgentHandler({
  params: threadParams,
  body: statePatch,
  handle: async ({ params, body, server, caller }) => {
    await server.threads.patchState(caller, params.deployment_id, params.thread_id, body.metadata);
    return reply(204);
  },
});
