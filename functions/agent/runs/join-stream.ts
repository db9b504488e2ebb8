import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { joinStreamQuery, runParams } from "../../../shared/agent/run-schemas.ts";
import { getRun } from "../../../shared/agent/runs.ts";
import { joinPoint, onClientGone, runSse, streamHeaders } from "../../../shared/agent/stream.ts";
import { defineHandler, reply } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/stream: join a run's stream (Last-Event-ID resumes
// after the event it names; ids count from 0, and -1 replays from the start; a non-resumable run's from now on).
export const handler = defineHandler({
  params: runParams,
  query: joinStreamQuery,
  handle: async ({ params, query, headers, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    const run = await getRun(d, params.thread_id, params.run_id);
    const modes = [query.stream_mode ?? []]
      .flat()
      .flatMap((m) => m.split(","))
      .filter(Boolean);
    const from = joinPoint(run, headers["last-event-id"]);
    const gone = new AbortController();
    return reply.stream(
      runSse(d, run.thread_id, run.run_id, { ...from, modes, signal: gone.signal }),
      streamHeaders(run.thread_id, run.run_id),
      () => {
        gone.abort();
        if (query.cancel_on_disconnect) void onClientGone(d, run.thread_id, run.run_id, true);
      },
    );
  },
});
