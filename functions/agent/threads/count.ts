import { searchScope } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams, threadCount } from "../../../shared/agent/run-schemas.ts";
import { countThreads } from "../../../shared/agent/threads.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/count
export const handler = defineHandler({
  params: deploymentParams,
  body: threadCount,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    return countThreads(d, { ...body, auth: await searchScope("threads:search", body) });
  },
});
