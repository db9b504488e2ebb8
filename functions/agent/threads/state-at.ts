import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { checkpointParams, stateQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/state/{checkpoint_id}: the state at one checkpoint.
export const handler = defineHandler({
  params: checkpointParams,
  query: stateQuery,
  handle: ({ params, query, tenantId }) =>
    threads.state(callerOf(tenantId), params.deployment_id, params.thread_id, {
      checkpoint: { checkpoint_id: params.checkpoint_id },
      subgraphs: query.subgraphs,
    }),
});
