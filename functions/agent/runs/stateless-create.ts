import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, runCreate } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/runs: a stateless background run (on a temporary thread).
export const handler = defineHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const { run, location } = await runs.create(callerOf(tenantId), params.deployment_id, null, body);
    return reply(200, run, { "content-location": location });
  },
});
