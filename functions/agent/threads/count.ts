import { deploymentParams, threadCount } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads/count
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: threadCount,
  handle: ({ params, body, server, caller }) => server.threads.count(caller, params.deployment_id, body),
});
