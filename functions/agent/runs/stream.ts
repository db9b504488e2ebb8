import { runCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/stream: create a run and stream it as SSE.
export const handler = defineAgentHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, server, caller }) => {
    const out = await server.runs.createAndStream(caller, params.deployment_id, params.thread_id, body);
    return reply.stream(out.body, out.headers, out.onClose);
  },
});
