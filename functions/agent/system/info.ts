import { createRequire } from "node:module";
import { DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { artifactManifest } from "../../../shared/agent/runtime/artifact.ts";
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
    // A route group langgraph.json's http.disable_* removed is not served (crons go with the runs).
    const off = (await artifactManifest().catch(() => undefined))?.http ?? {};
    return {
      version: config.version,
      langgraph_js_version: langgraphVersion(),
      flags: {
        assistants: !off.disable_assistants,
        crons: !off.disable_runs,
        langsmith: d.tracing_project_id !== null,
        langsmith_tracing_replicas: false,
      },
    };
  },
});
