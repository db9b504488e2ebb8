import { agentDeployment } from "../../../shared/agent/context.ts";
import { stateQuery, threadParams } from "../../../shared/agent/run-schemas.ts";
import { threadState } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/state: the latest state (values, next, tasks, checkpoint, …).
export const handler = defineHandler({
  params: threadParams,
  query: stateQuery,
  handle: async ({ params, query, tenantId }) =>
    threadState(await agentDeployment(tenantId, params.deployment_id), params.thread_id, {
      subgraphs: query.subgraphs,
    }),
});
