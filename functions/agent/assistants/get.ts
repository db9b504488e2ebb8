import { AssistantParams } from "../../../shared/agent/assistant-api.ts";
import { Assistant } from "../../../shared/agent/assistants.ts";
import { authorizedAssistant } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  response: Assistant,
  handle: async ({ tenantId, params }) =>
    authorizedAssistant(await agentDeployment(tenantId, params.deployment_id), params.assistant_id),
});
