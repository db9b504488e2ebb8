import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { statePatch, threadParams } from "../../../shared/agent/run-schemas.ts";
import { patchThreadState } from "../../../shared/agent/state.ts";
import { defineHandler, reply } from "../../handler.ts";

// PATCH /agents/{deployment_id}/threads/{thread_id}/state: merge metadata into the latest checkpoint's.
export const handler = defineHandler({
  params: threadParams,
  body: statePatch,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "update", { metadata: body.metadata });
    await patchThreadState(d, params.thread_id, body.metadata);
    return reply(204);
  },
});
