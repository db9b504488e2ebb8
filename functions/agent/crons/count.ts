import { searchScope } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { countCrons } from "../../../shared/agent/crons.ts";
import { cronCount } from "../../../shared/agent/crons-schemas.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/crons/count
export const handler = defineHandler({
  params: deploymentParams,
  body: cronCount,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    return countCrons(d, { ...body, auth: await searchScope("crons:search", body) });
  },
});
