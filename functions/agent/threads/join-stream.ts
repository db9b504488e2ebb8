import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { threadParams, threadStreamQuery } from "../../../shared/agent/run-schemas.ts";
import { SSE_HEADERS } from "../../../shared/agent/stream.ts";
import { threadSse } from "../../../shared/agent/thread-stream.ts";
import { getThread } from "../../../shared/agent/threads.ts";
import { defineHandler, reply } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/stream: every run of the thread as it happens (SSE), until
// the client leaves; Last-Event-ID resumes (ids `<run_id>:<seq>`), `-` replays the thread's stored runs.
export const handler = defineHandler({
  params: threadParams,
  query: threadStreamQuery,
  handle: async ({ params, query, headers, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    const { thread_id } = await getThread(d, params.thread_id);
    const gone = new AbortController();
    return reply.stream(
      threadSse(d, thread_id, {
        modes: query.modes,
        lastEventId: headers["last-event-id"],
        signal: gone.signal,
      }),
      { ...SSE_HEADERS, location: `/threads/${thread_id}/stream` },
      () => gone.abort(),
    );
  },
});
