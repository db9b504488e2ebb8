import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { runParams } from "../../../shared/agent/run-schemas.ts";
import { getRun } from "../../../shared/agent/runs.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id} (a rolled-back run is gone: 404).
export const handler = defineHandler({
  params: runParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return getRun(d, params.thread_id, params.run_id);
  },
});
