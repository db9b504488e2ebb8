import { deploymentParams, runCreate } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/runs/stream: a stateless run streamed as SSE.
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, server, caller }) => {
    const out = await server.runs.createAndStream(caller, params.deployment_id, null, body);
    return reply.stream(out.body, out.headers, out.onClose);
  },
});
