import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { stateQuery, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/state: the latest state (values, next, tasks, checkpoint, …).
export const handler = defineHandler({
  params: threadParams,
  query: stateQuery,
  handle: ({ params, query, tenantId }) =>
    threads.state(callerOf(tenantId), params.deployment_id, params.thread_id, { subgraphs: query.subgraphs }),
});
