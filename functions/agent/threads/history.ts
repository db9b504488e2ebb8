import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { historyBody, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/history: past states, newest first (limit, before, metadata).
export const handler = defineHandler({
  params: threadParams,
  body: historyBody,
  handle: ({ params, body, tenantId }) =>
    threads.history(callerOf(tenantId), params.deployment_id, params.thread_id, body),
});
