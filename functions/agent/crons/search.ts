import { callerOf, crons } from "../../../shared/agent/ops/index.ts";
import { cronSearch, deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/crons/search: filter by assistant, thread, enabled, metadata; sort and page.
export const handler = defineHandler({
  params: deploymentParams,
  body: cronSearch,
  handle: ({ params, body, tenantId }) => crons.search(callerOf(tenantId), params.deployment_id, body),
});
