import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { runParams } from "../../../shared/agent/run-schemas.ts";
import { deleteRun } from "../../../shared/agent/runs.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}: a finished run (an active one → 409).
export const handler = defineHandler({
  params: runParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "delete", { run_id: params.run_id });
    await deleteRun(d, params.thread_id, params.run_id);
    return reply(204);
  },
});
