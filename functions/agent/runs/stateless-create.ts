import { deploymentParams, runCreate } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/runs: a stateless background run (on a temporary thread).
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, server, caller }) => {
    const { run, location } = await server.runs.create(caller, params.deployment_id, null, body);
    return reply(200, run, { "content-location": location });
  },
});
