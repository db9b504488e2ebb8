import { runList, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs: newest first.
export const handler = defineAgentHandler({
  params: threadParams,
  query: runList,
  handle: ({ params, query, server, caller }) =>
    server.runs.list(caller, params.deployment_id, params.thread_id, query),
});
