import { DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { agentOpenApiDocument } from "../../../shared/agent/openapi.ts";
import { config } from "../../../shared/config.ts";
import type { DocRoute } from "../../../shared/http/openapi.ts";
import { defineHandler } from "../../handler.ts";
import { loadAgentHandler } from "../../modules/agent.ts";
import { routes } from "../../routes.ts";

let docRoutes: Promise<DocRoute[]> | undefined;

// The same document for every deployment (the routes are the same); only the server URL differs.
export const handler = defineHandler({
  params: DeploymentParams,
  handle: async ({ params }) => {
    docRoutes ??= Promise.all(
      routes
        .filter((r) => r.group === "agent")
        .map(async (r) => ({ ...r, handler: await loadAgentHandler(r) })),
    );
    return agentOpenApiDocument(config.version, params.deployment_id, await docRoutes);
  },
});
