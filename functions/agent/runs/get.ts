import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id} (a rolled-back run is gone: 404).
export const handler = defineHandler({
  params: runParams,
  handle: ({ params, tenantId }) =>
    runs.get(callerOf(tenantId), params.deployment_id, params.thread_id, params.run_id),
});
