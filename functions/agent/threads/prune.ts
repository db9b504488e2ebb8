import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, threadPrune } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/prune: delete threads, or keep only their latest checkpoint.
export const handler = defineHandler({
  params: deploymentParams,
  body: threadPrune,
  handle: async ({ params, body, tenantId }) => ({
    pruned_count: await threads.prune(
      callerOf(tenantId),
      params.deployment_id,
      body.thread_ids,
      body.strategy,
    ),
  }),
});
