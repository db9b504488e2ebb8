import { Assistant, AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  response: Assistant,
  handle: ({ params, server, caller }) =>
    server.assistants.get(caller, params.deployment_id, params.assistant_id),
});
