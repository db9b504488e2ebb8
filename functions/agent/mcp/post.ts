import { deploymentParams } from "../../../shared/agent/ops/schemas.ts";
import * as protocols from "../../../shared/agent/protocols/index.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/mcp: the Model Context Protocol (Streamable HTTP, stateless, JSON answers), one
// tool per assistant (shared/agent/protocols/mcp.ts). The body is read raw: a malformed one gets a JSON-RPC error.
export const handler = defineAgentHandler({
  params: deploymentParams,
  rawBody: true,
  handle: async ({ params, raw, headers, server, caller }) => {
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const out = await protocols.mcpPost(server, caller, params.deployment_id, raw, lower);
    return reply(out.status, out.body, out.headers);
  },
});
