import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// DELETE /agents/{deployment_id}/threads/{thread_id}: cancels its active runs, deletes runs and checkpoints.
export const handler = defineHandler({
  params: threadParams,
  handle: async ({ params, tenantId }) => {
    await threads.remove(callerOf(tenantId), params.deployment_id, params.thread_id);
    return reply(204);
  },
});
