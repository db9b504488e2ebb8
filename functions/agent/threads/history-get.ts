import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { historyQuery, threadParams } from "../../../shared/agent/run-schemas.ts";
import { threadHistory } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/history?limit&before
export const handler = defineHandler({
  params: threadParams,
  query: historyQuery,
  handle: async ({ params, query, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return threadHistory(d, params.thread_id, query);
  },
});
