import { deploymentParams, threadCreate } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads: create a thread (if_exists raise → 409, do_nothing → the existing one),
// a new one with the given supersteps applied.
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: threadCreate,
  handle: ({ params, body, server, caller }) => server.threads.create(caller, params.deployment_id, body),
});
