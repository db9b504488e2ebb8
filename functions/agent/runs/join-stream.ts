import { joinStreamQuery, runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/stream: join a run's stream (Last-Event-ID resumes
// after the event it names; ids count from 0, and -1 replays from the start; a non-resumable run's from now on).
export const handler = defineAgentHandler({
  params: runParams,
  query: joinStreamQuery,
  handle: async ({ params, query, headers, server, caller }) => {
    const modes = [query.stream_mode ?? []]
      .flat()
      .flatMap((m) => m.split(","))
      .filter(Boolean);
    const out = await server.runs.joinStream(caller, params.deployment_id, params.thread_id, params.run_id, {
      modes,
      lastEventId: headers["last-event-id"],
      cancelOnDisconnect: query.cancel_on_disconnect === true,
    });
    return reply.stream(out.body, out.headers, out.onClose);
  },
});
