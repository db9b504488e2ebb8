import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { threadParams, threadPatch } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// PATCH /agents/{deployment_id}/threads/{thread_id}: merge metadata.
export const handler = defineHandler({
  params: threadParams,
  body: threadPatch,
  handle: ({ params, body, tenantId }) =>
    threads.update(callerOf(tenantId), params.deployment_id, params.thread_id, body),
});
