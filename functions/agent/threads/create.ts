import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, threadCreate } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads: create a thread (if_exists raise → 409, do_nothing → the existing one),
// a new one with the given supersteps applied.
export const handler = defineHandler({
  params: deploymentParams,
  body: threadCreate,
  handle: ({ params, body, tenantId }) => threads.create(callerOf(tenantId), params.deployment_id, body),
});
