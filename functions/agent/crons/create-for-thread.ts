import { callerOf, crons } from "../../../shared/agent/ops/index.ts";
import { cronCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/crons: a cron whose ticks run on the thread.
export const handler = defineHandler({
  params: threadParams,
  body: cronCreate,
  handle: ({ params, body, tenantId }) =>
    crons.create(callerOf(tenantId), params.deployment_id, params.thread_id, body),
});
