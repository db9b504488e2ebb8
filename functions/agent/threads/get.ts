import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}
export const handler = defineHandler({
  params: threadParams,
  handle: ({ params, tenantId }) => threads.get(callerOf(tenantId), params.deployment_id, params.thread_id),
});
