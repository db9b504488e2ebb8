import { threadParams, threadPatch } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// PATCH /agents/{deployment_id}/threads/{thread_id}: merge metadata.
export const handler = defineAgentHandler({
  params: threadParams,
  body: threadPatch,
  handle: ({ params, body, server, caller }) =>
    server.threads.update(caller, params.deployment_id, params.thread_id, body),
});
