import { deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { mcpMethodNotAllowed } from "../../../shared/agent/protocols/index.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// GET /agents/{deployment_id}/mcp: 405, as a stateless Streamable HTTP server answers (it opens no SSE stream).
export const handler = defineAgentHandler({
  params: deploymentParams,
  handle: () => {
    const out = mcpMethodNotAllowed();
    return reply(out.status, out.body, out.headers);
  },
});
