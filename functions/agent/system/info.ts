import { callerOf, system } from "../../../shared/agent/ops/index.ts";
import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, z } from "../../handler.ts";

// Server info as the LangGraph API server's /info: what this agent server supports.
export const handler = defineHandler({
  params: DeploymentParams,
  response: z.object({
    version: z.string(),
    langgraph_js_version: z.string().optional(),
    flags: z.record(z.string(), z.boolean()),
  }),
  handle: ({ tenantId, params }) => system.info(callerOf(tenantId), params.deployment_id),
});
