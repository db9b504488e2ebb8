import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { stateUpdate, threadParams } from "../../../shared/agent/run-schemas.ts";
import { ACTIVE, threadRuns } from "../../../shared/agent/runs.ts";
import { updateThreadState } from "../../../shared/agent/state.ts";
import { Conflict } from "../../../shared/errors.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/state: update the state as if `as_node` had written it. Not
// while a run is pending or running on the thread (409, as the reference): that run would write over it.
export const handler = defineHandler({
  params: threadParams,
  body: stateUpdate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "update");
    if ((await threadRuns(d, params.thread_id, ACTIVE)).length)
      throw new Conflict(
        `Thread ${params.thread_id} has a pending or running run: its state cannot be updated until the run ends`,
      );
    return updateThreadState(d, params.thread_id, body);
  },
});
