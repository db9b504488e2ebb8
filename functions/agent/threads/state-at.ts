import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { checkpointParams, stateQuery } from "../../../shared/agent/run-schemas.ts";
import { threadState } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/state/{checkpoint_id}: the state at one checkpoint.
export const handler = defineHandler({
  params: checkpointParams,
  query: stateQuery,
  handle: async ({ params, query, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return threadState(d, params.thread_id, {
      checkpoint: { checkpoint_id: params.checkpoint_id },
      subgraphs: query.subgraphs,
    });
  },
});
