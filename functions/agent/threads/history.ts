import { historyBody, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/history: past states, newest first (limit, before, metadata).
export const handler = defineAgentHandler({
  params: threadParams,
  body: historyBody,
  handle: ({ params, body, server, caller }) =>
    server.threads.history(caller, params.deployment_id, params.thread_id, body),
});
