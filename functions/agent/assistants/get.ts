import { AssistantParams } from "../../../shared/agent/assistant-api.ts";
import { Assistant, getAssistant } from "../../../shared/agent/assistants.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  response: Assistant,
  handle: async ({ tenantId, params }) =>
    getAssistant(await agentDeployment(tenantId, params.deployment_id), params.assistant_id),
});
