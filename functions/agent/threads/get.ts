import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { threadParams } from "../../../shared/agent/run-schemas.ts";
import { getThread } from "../../../shared/agent/threads.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}
export const handler = defineHandler({
  params: threadParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return getThread(d, params.thread_id);
  },
});
