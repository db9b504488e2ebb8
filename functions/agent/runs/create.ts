import { runAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { runCreate, threadParams } from "../../../shared/agent/run-schemas.ts";
import { createRun } from "../../../shared/agent/runs.ts";
import { kick } from "../../../shared/agent/worker.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs: a background run (answers at once, pending).
export const handler = defineHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { threadMetadata } = await runAccess(d, params.thread_id, body);
    const run = await createRun(d, params.thread_id, body, kick, threadMetadata);
    return reply(200, run, { "content-location": `/threads/${run.thread_id}/runs/${run.run_id}` });
  },
});
