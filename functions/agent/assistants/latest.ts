import { Assistant, AssistantLatestBody, AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  body: AssistantLatestBody,
  response: Assistant,
  handle: ({ params, body, server, caller }) =>
    server.assistants.setLatest(caller, params.deployment_id, params.assistant_id, body.version),
});
