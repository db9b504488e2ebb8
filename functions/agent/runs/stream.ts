import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { runCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/stream: create a run and stream it as SSE.
export const handler = defineHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const out = await runs.createAndStream(callerOf(tenantId), params.deployment_id, params.thread_id, body);
    return reply.stream(out.body, out.headers, out.onClose);
  },
});
