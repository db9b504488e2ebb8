import { checkpointParams, stateQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/state/{checkpoint_id}: the state at one checkpoint.
export const handler = defineAgentHandler({
  params: checkpointParams,
  query: stateQuery,
  handle: ({ params, query, server, caller }) =>
    server.threads.state(caller, params.deployment_id, params.thread_id, {
      checkpoint: { checkpoint_id: params.checkpoint_id },
      subgraphs: query.subgraphs,
    }),
});
