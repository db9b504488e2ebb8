import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { threadParams } from "../../../shared/agent/run-schemas.ts";
import { deleteThread } from "../../../shared/agent/thread-delete.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/threads/{thread_id}: cancels its active runs, deletes runs and checkpoints.
export const handler = defineHandler({
  params: threadParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "delete");
    await deleteThread(d, params.thread_id);
    return reply(204);
  },
});
