import { threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}
export const handler = defineAgentHandler({
  params: threadParams,
  handle: ({ params, server, caller }) => server.threads.get(caller, params.deployment_id, params.thread_id),
});
