import { AssistantLatestBody, AssistantParams } from "../../../shared/agent/assistant-api.ts";
import { Assistant, setLatestVersion } from "../../../shared/agent/assistants.ts";
import { authorizedAssistant } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantLatestBody,
  response: Assistant,
  handle: async ({ tenantId, params, body }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await authorizedAssistant(d, params.assistant_id, "update", { version: body.version });
    return setLatestVersion(d, params.assistant_id, body.version);
  },
});
