import { AssistantCountBody, DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { countAssistants } from "../../../shared/agent/assistants.ts";
import { searchScope } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler, z } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  body: AssistantCountBody,
  response: z.number().int(),
  handle: async ({ tenantId, params, body }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    return countAssistants(d, { ...body, auth: await searchScope("assistants:search", body) });
  },
});
