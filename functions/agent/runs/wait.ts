import { runCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/wait: create a run and answer its final values
// (newlines until then: shared/agent/stream/keep-alive.ts).
export const handler = defineAgentHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, server, caller }) => {
    const out = await server.runs.createAndWait(caller, params.deployment_id, params.thread_id, body);
    return reply.stream(out.body, out.headers);
  },
});
