import { AssistantParams, AssistantPatchBody } from "../../../shared/agent/assistant-api.ts";
import { Assistant, updateAssistant } from "../../../shared/agent/assistants.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantPatchBody,
  response: Assistant,
  handle: async ({ tenantId, params, body }) =>
    updateAssistant(await agentDeployment(tenantId, params.deployment_id), params.assistant_id, body),
});
