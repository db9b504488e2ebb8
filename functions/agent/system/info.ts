import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, z } from "../handler.ts";

// Server info as the LangGraph API server's /info: what this agent server supports.
export const handler = defineAgentHandler({
  params: DeploymentParams,
  response: z.object({
    version: z.string(),
    langgraph_js_version: z.string().optional(),
    flags: z.record(z.string(), z.boolean()),
  }),
  handle: ({ params, server, caller }) => server.system.info(caller, params.deployment_id),
});
