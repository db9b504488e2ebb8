import { runAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { keepAliveJson, WAIT_HEADERS } from "../../../shared/agent/keep-alive.ts";
import { deploymentParams, runCreate } from "../../../shared/agent/run-schemas.ts";
import { createRun } from "../../../shared/agent/runs.ts";
import { waitRun } from "../../../shared/agent/stream.ts";
import { kick } from "../../../shared/agent/worker.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/wait: a stateless run; answers its final values (newlines until
// then: shared/agent/keep-alive.ts).
export const handler = defineHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { threadMetadata } = await runAccess(d, null, body);
    const run = await createRun(d, null, body, kick, threadMetadata);
    return reply.stream(keepAliveJson(waitRun(d, run.thread_id, run.run_id)), {
      ...WAIT_HEADERS,
      "content-location": `/runs/${run.run_id}`,
    });
  },
});
