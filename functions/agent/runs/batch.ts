import { runAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams, runBatch } from "../../../shared/agent/run-schemas.ts";
import { createStatelessRuns } from "../../../shared/agent/runs-bulk.ts";
import { kick } from "../../../shared/agent/worker.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/batch: several stateless background runs in one call (answered in order).
export const handler = defineHandler({
  params: deploymentParams,
  body: runBatch,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const scoped = [];
    for (const run of body) scoped.push((await runAccess(d, null, run)).threadMetadata ?? {});
    return createStatelessRuns(d, body, kick, scoped);
  },
});
