import { historyQuery, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/history?limit&before
export const handler = defineAgentHandler({
  params: threadParams,
  query: historyQuery,
  handle: ({ params, query, server, caller }) =>
    server.threads.history(caller, params.deployment_id, params.thread_id, query),
});
