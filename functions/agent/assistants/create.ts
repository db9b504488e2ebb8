import { Assistant, AssistantCreateBody, DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

export const handler = defineAgentHandler({
  params: DeploymentParams,
  body: AssistantCreateBody,
  response: Assistant,
  handle: ({ params, body, server, caller }) => server.assistants.create(caller, params.deployment_id, body),
});
