import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/join: waits for the run (newlines until then:
// shared/agent/stream/keep-alive.ts); its final values.
export const handler = defineHandler({
  params: runParams,
  handle: async ({ params, tenantId }) => {
    const out = await runs.join(callerOf(tenantId), params.deployment_id, params.thread_id, params.run_id);
    return reply.stream(out.body, out.headers);
  },
});
