import { threadParams, threadStreamQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/stream: every run of the thread as it happens (SSE), until
// the client leaves; Last-Event-ID resumes (ids `<run_id>:<seq>`), `-` replays the thread's stored runs.
export const handler = defineAgentHandler({
  params: threadParams,
  query: threadStreamQuery,
  handle: async ({ params, query, headers, server, caller }) => {
    const out = await server.threads.joinStream(caller, params.deployment_id, params.thread_id, {
      modes: query.modes,
      lastEventId: headers["last-event-id"],
    });
    return reply.stream(out.body, out.headers, out.onClose);
  },
});
