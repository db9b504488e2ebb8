import { AssistantLatestBody, AssistantParams } from "../../../shared/agent/assistant-api.ts";
import { Assistant, setLatestVersion } from "../../../shared/agent/assistants.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantLatestBody,
  response: Assistant,
  handle: async ({ tenantId, params, body }) =>
    setLatestVersion(
      await agentDeployment(tenantId, params.deployment_id),
      params.assistant_id,
      body.version,
    ),
});
