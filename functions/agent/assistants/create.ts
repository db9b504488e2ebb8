import { AssistantCreateBody, DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { Assistant, createAssistant } from "../../../shared/agent/assistants.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  body: AssistantCreateBody,
  response: Assistant,
  handle: async ({ tenantId, params, body }) =>
    createAssistant(await agentDeployment(tenantId, params.deployment_id), body),
});
