import { Assistant, AssistantParams, AssistantVersionsBody } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, z } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  body: AssistantVersionsBody,
  response: z.array(Assistant.omit({ updated_at: true })),
  handle: ({ params, body, server, caller }) =>
    server.assistants.versions(caller, params.deployment_id, params.assistant_id, body),
});
