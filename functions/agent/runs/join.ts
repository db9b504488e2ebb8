import { runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/join: waits for the run (newlines until then:
// shared/agent/stream/keep-alive.ts); its final values.
export const handler = defineAgentHandler({
  params: runParams,
  handle: async ({ params, server, caller }) => {
    const out = await server.runs.join(caller, params.deployment_id, params.thread_id, params.run_id);
    return reply.stream(out.body, out.headers);
  },
});
