import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { runParams } from "../../../shared/agent/run-schemas.ts";
import { getRun } from "../../../shared/agent/runs.ts";
import { waitRun } from "../../../shared/agent/stream.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/join: waits for the run; its final values.
export const handler = defineHandler({
  params: runParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    await getRun(d, params.thread_id, params.run_id);
    return waitRun(d, params.thread_id, params.run_id);
  },
});
