import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { threadParams, threadPatch } from "../../../shared/agent/run-schemas.ts";
import { patchThread } from "../../../shared/agent/threads.ts";
import { defineHandler } from "../../handler.ts";

// PATCH /agents/{deployment_id}/threads/{thread_id}: merge metadata.
export const handler = defineHandler({
  params: threadParams,
  body: threadPatch,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await threadAccess(d, params.thread_id, "update", { metadata: body.metadata });
    return patchThread(d, params.thread_id, body.metadata, body.ttl);
  },
});
