import { agentDeployment } from "../../../shared/agent/context.ts";
import { threadParams, threadPatch } from "../../../shared/agent/run-schemas.ts";
import { patchThread } from "../../../shared/agent/threads.ts";
import { defineHandler } from "../../handler.ts";

// PATCH /agents/{deployment_id}/threads/{thread_id}: merge metadata.
export const handler = defineHandler({
  params: threadParams,
  body: threadPatch,
  handle: async ({ params, body, tenantId }) =>
    patchThread(
      await agentDeployment(tenantId, params.deployment_id),
      params.thread_id,
      body.metadata,
      body.ttl,
    ),
});
