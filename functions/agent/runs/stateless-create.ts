import { runAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams, runCreate } from "../../../shared/agent/run-schemas.ts";
import { createRun } from "../../../shared/agent/runs.ts";
import { kick } from "../../../shared/agent/worker.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/runs: a stateless background run (on a temporary thread).
export const handler = defineHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { threadMetadata } = await runAccess(d, null, body);
    const run = await createRun(d, null, body, kick, threadMetadata);
    return reply(200, run, { "content-location": `/runs/${run.run_id}` });
  },
});
