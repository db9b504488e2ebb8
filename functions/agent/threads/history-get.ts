import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { historyQuery, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/history?limit&before
export const handler = defineHandler({
  params: threadParams,
  query: historyQuery,
  handle: ({ params, query, tenantId }) =>
    threads.history(callerOf(tenantId), params.deployment_id, params.thread_id, query),
});
