import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { statePatch, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// PATCH /agents/{deployment_id}/threads/{thread_id}/state: merge metadata into the latest checkpoint's.
export const handler = defineHandler({
  params: threadParams,
  body: statePatch,
  handle: async ({ params, body, tenantId }) => {
    await threads.patchState(callerOf(tenantId), params.deployment_id, params.thread_id, body.metadata);
    return reply(204);
  },
});
