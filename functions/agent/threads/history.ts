import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { historyBody, threadParams } from "../../../shared/agent/run-schemas.ts";
import { threadHistory } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/history: past states, newest first (limit, before, metadata).
export const handler = defineHandler({
  params: threadParams,
  body: historyBody,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return threadHistory(d, params.thread_id, body);
  },
});
