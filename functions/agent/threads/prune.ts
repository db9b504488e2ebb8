import { threadAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams, threadPrune } from "../../../shared/agent/run-schemas.ts";
import { pruneThreads } from "../../../shared/agent/thread-delete.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/prune: delete threads, or keep only their latest checkpoint.
export const handler = defineHandler({
  params: deploymentParams,
  body: threadPrune,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    for (const id of body.thread_ids) await threadAccess(d, id, "delete");
    return { pruned_count: await pruneThreads(d, body.thread_ids, body.strategy) };
  },
});
