import { deploymentParams, runCreate } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/runs/wait: a stateless run; answers its final values (newlines until
// then: shared/agent/stream/keep-alive.ts).
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, server, caller }) => {
    const out = await server.runs.createAndWait(caller, params.deployment_id, null, body);
    return reply.stream(out.body, out.headers);
  },
});
