import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}: a finished run (an active one → 409).
export const handler = defineHandler({
  params: runParams,
  handle: async ({ params, tenantId }) => {
    await runs.remove(callerOf(tenantId), params.deployment_id, params.thread_id, params.run_id);
    return reply(204);
  },
});
