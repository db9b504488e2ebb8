import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/copy: a new thread with a copy of every checkpoint.
export const handler = defineHandler({
  params: threadParams,
  handle: ({ params, tenantId }) => threads.copy(callerOf(tenantId), params.deployment_id, params.thread_id),
});
