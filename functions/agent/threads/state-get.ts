import { stateQuery, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/state: the latest state (values, next, tasks, checkpoint, …).
export const handler = defineAgentHandler({
  params: threadParams,
  query: stateQuery,
  handle: ({ params, query, server, caller }) =>
    server.threads.state(caller, params.deployment_id, params.thread_id, { subgraphs: query.subgraphs }),
});
