import { createRequire } from "node:module";
import { DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { config } from "../../../shared/config.ts";
import { defineHandler, z } from "../../handler.ts";

const langgraphVersion = (): string | undefined => {
  try {
    return (createRequire(import.meta.url)("@langchain/langgraph/package.json") as { version: string })
      .version;
  } catch {
    return undefined;
  }
};

// Server info as the LangGraph API server's /info: what this agent server supports.
export const handler = defineHandler({
  params: DeploymentParams,
  response: z.object({
    version: z.string(),
    langgraph_js_version: z.string().optional(),
    flags: z.record(z.string(), z.boolean()),
  }),
  handle: async ({ tenantId, params }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    return {
      version: config.version,
      langgraph_js_version: langgraphVersion(),
      flags: {
        assistants: true,
        crons: false,
        langsmith: d.tracing_project_id !== null,
        langsmith_tracing_replicas: false,
      },
    };
  },
});
