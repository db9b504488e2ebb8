import { runAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { keepAliveJson, WAIT_HEADERS } from "../../../shared/agent/keep-alive.ts";
import { runCreate, threadParams } from "../../../shared/agent/run-schemas.ts";
import { createRun } from "../../../shared/agent/runs.ts";
import { waitRun } from "../../../shared/agent/stream.ts";
import { kick } from "../../../shared/agent/worker.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/wait: create a run and answer its final values
// (newlines until then: shared/agent/keep-alive.ts).
export const handler = defineHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { threadMetadata } = await runAccess(d, params.thread_id, body);
    const run = await createRun(d, params.thread_id, body, kick, threadMetadata);
    return reply.stream(keepAliveJson(waitRun(d, run.thread_id, run.run_id)), {
      ...WAIT_HEADERS,
      "content-location": `/threads/${run.thread_id}/runs/${run.run_id}`,
    });
  },
});
