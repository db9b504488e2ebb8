import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { threadParams } from "../../../shared/agent/run-schemas.ts";
import { copyThread } from "../../../shared/agent/threads.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/copy: a new thread with a copy of every checkpoint.
export const handler = defineHandler({
  params: threadParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return copyThread(d, params.thread_id);
  },
});
