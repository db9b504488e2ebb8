import { searchScope } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { searchCrons } from "../../../shared/agent/crons.ts";
import { cronSearch } from "../../../shared/agent/crons-schemas.ts";
import { deploymentParams } from "../../../shared/agent/run-schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/crons/search: filter by assistant, thread, enabled, metadata; sort and page.
export const handler = defineHandler({
  params: deploymentParams,
  body: cronSearch,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    return searchCrons(d, { ...body, auth: await searchScope("crons:search", body) });
  },
});
