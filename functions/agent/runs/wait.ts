import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { runCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/wait: create a run and answer its final values
// (newlines until then: shared/agent/stream/keep-alive.ts).
export const handler = defineHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const out = await runs.createAndWait(callerOf(tenantId), params.deployment_id, params.thread_id, body);
    return reply.stream(out.body, out.headers);
  },
});
