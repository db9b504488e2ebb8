import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { stateUpdate, threadParams } from "../../../shared/agent/run-schemas.ts";
import { updateThreadState } from "../../../shared/agent/state.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/state: update the state as if `as_node` had written it.
export const handler = defineHandler({
  params: threadParams,
  body: stateUpdate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "update");
    return updateThreadState(d, params.thread_id, body);
  },
});
