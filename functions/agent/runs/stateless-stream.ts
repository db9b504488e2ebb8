import { runAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams, runCreate } from "../../../shared/agent/run-schemas.ts";
import { createRun } from "../../../shared/agent/runs.ts";
import { onClientGone, runSse, streamHeaders } from "../../../shared/agent/stream.ts";
import { kick } from "../../../shared/agent/worker.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/stream: a stateless run streamed as SSE.
export const handler = defineHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { threadMetadata } = await runAccess(d, null, body);
    const run = await createRun(d, null, body, kick, threadMetadata);
    const gone = new AbortController();
    return reply.stream(
      runSse(d, run.thread_id, run.run_id, { signal: gone.signal }),
      streamHeaders(null, run.run_id),
      () => {
        gone.abort();
        void onClientGone(d, run.thread_id, run.run_id);
      },
    );
  },
});
