import { AssistantParams, AssistantPatchBody } from "../../../shared/agent/assistant-api.ts";
import { Assistant, updateAssistant } from "../../../shared/agent/assistants.ts";
import { authorizedAssistant } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantPatchBody,
  response: Assistant,
  handle: async ({ tenantId, params, body }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await authorizedAssistant(d, params.assistant_id, "update", body);
    return updateAssistant(d, params.assistant_id, body);
  },
});
