import { Assistant, AssistantParams, AssistantPatchBody } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  body: AssistantPatchBody,
  response: Assistant,
  handle: ({ params, body, server, caller }) =>
    server.assistants.update(caller, params.deployment_id, params.assistant_id, body),
});
