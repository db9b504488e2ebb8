import { agentDeployment } from "../../../shared/agent/context.ts";
import { checkpointParams, stateQuery } from "../../../shared/agent/run-schemas.ts";
import { threadState } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/state/{checkpoint_id}: the state at one checkpoint.
export const handler = defineHandler({
  params: checkpointParams,
  query: stateQuery,
  handle: async ({ params, query, tenantId }) =>
    threadState(await agentDeployment(tenantId, params.deployment_id), params.thread_id, {
      checkpoint: { checkpoint_id: params.checkpoint_id },
      subgraphs: query.subgraphs,
    }),
});
