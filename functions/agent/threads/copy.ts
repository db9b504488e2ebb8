import { threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/copy: a new thread with a copy of every checkpoint.
export const handler = defineAgentHandler({
  params: threadParams,
  handle: ({ params, server, caller }) => server.threads.copy(caller, params.deployment_id, params.thread_id),
});
