import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, threadCount } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/count
export const handler = defineHandler({
  params: deploymentParams,
  body: threadCount,
  handle: ({ params, body, tenantId }) => threads.count(callerOf(tenantId), params.deployment_id, body),
});
