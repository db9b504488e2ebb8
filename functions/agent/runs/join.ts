import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { keepAliveJson, WAIT_HEADERS } from "../../../shared/agent/keep-alive.ts";
import { runParams } from "../../../shared/agent/run-schemas.ts";
import { getRun } from "../../../shared/agent/runs.ts";
import { waitRun } from "../../../shared/agent/stream.ts";
import { defineHandler, reply } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id}/join: waits for the run (newlines until then:
// shared/agent/keep-alive.ts); its final values.
export const handler = defineHandler({
  params: runParams,
  handle: async ({ params, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    await getRun(d, params.thread_id, params.run_id);
    return reply.stream(keepAliveJson(waitRun(d, params.thread_id, params.run_id)), WAIT_HEADERS);
  },
});
