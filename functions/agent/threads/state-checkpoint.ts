import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { stateAtCheckpoint, threadParams } from "../../../shared/agent/run-schemas.ts";
import { threadState } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/state/checkpoint: the state at a checkpoint given as an object.
export const handler = defineHandler({
  params: threadParams,
  body: stateAtCheckpoint,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "read");
    return threadState(d, params.thread_id, body);
  },
});
