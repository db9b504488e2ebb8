import { AssistantParams, AssistantVersionsBody } from "../../../shared/agent/assistant-api.ts";
import { Assistant, listVersions } from "../../../shared/agent/assistants.ts";
import { authorizedAssistant } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler, z } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantVersionsBody,
  response: z.array(Assistant.omit({ updated_at: true })),
  handle: async ({ tenantId, params, body }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await authorizedAssistant(d, params.assistant_id);
    return listVersions(d, params.assistant_id, body);
  },
});
