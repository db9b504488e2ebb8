import { deploymentParams, threadPrune } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads/prune: delete threads, or keep only their latest checkpoint.
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: threadPrune,
  handle: async ({ params, body, server, caller }) => ({
    pruned_count: await server.threads.prune(caller, params.deployment_id, body.thread_ids, body.strategy),
  }),
});
