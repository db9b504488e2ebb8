import { agentDeployment } from "../../../shared/agent/context.ts";
import { historyQuery, threadParams } from "../../../shared/agent/run-schemas.ts";
import { threadHistory } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/history?limit&before
export const handler = defineHandler({
  params: threadParams,
  query: historyQuery,
  handle: async ({ params, query, tenantId }) =>
    threadHistory(await agentDeployment(tenantId, params.deployment_id), params.thread_id, query),
});
