import { AssistantCreateBody, DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { Assistant, createAssistant } from "../../../shared/agent/assistants.ts";
import { assistantCreateAccess } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  body: AssistantCreateBody,
  response: Assistant,
  handle: async ({ tenantId, params, body }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const inScope = await assistantCreateAccess(body);
    return inScope(await createAssistant(d, body));
  },
});
