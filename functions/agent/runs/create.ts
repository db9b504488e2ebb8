import { runCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs: a background run (answers at once, pending).
export const handler = defineAgentHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, server, caller }) => {
    const { run, location } = await server.runs.create(caller, params.deployment_id, params.thread_id, body);
    return reply(200, run, { "content-location": location });
  },
});
