import { AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  handle: ({ params, server, caller }) =>
    server.assistants.schemas(caller, params.deployment_id, params.assistant_id),
});
