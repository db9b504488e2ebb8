import { threadCreateAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams, threadCreate } from "../../../shared/agent/run-schemas.ts";
import { applySupersteps } from "../../../shared/agent/state.ts";
import { createThread } from "../../../shared/agent/threads.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads: create a thread (if_exists raise → 409, do_nothing → the existing one),
// a new one with the given supersteps applied.
export const handler = defineHandler({
  params: deploymentParams,
  body: threadCreate,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const { supersteps } = body;
    const inScope = await threadCreateAccess(body);
    return inScope(
      await createThread(
        d,
        body,
        supersteps?.length ? (threadId) => applySupersteps(d, threadId, supersteps) : undefined,
      ),
    );
  },
});
