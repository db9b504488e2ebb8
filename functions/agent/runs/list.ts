import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { runList, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs: newest first.
export const handler = defineHandler({
  params: threadParams,
  query: runList,
  handle: ({ params, query, tenantId }) =>
    runs.list(callerOf(tenantId), params.deployment_id, params.thread_id, query),
});
