import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { runList, threadParams } from "../../../shared/agent/run-schemas.ts";
import { listRuns } from "../../../shared/agent/runs.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs: newest first.
export const handler = defineHandler({
  params: threadParams,
  query: runList,
  handle: async ({ params, query, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return listRuns(d, params.thread_id, query);
  },
});
