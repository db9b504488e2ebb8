import { AssistantCountBody, DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, z } from "../handler.ts";

export const handler = defineAgentHandler({
  params: DeploymentParams,
  body: AssistantCountBody,
  response: z.number().int(),
  handle: ({ params, body, server, caller }) => server.assistants.count(caller, params.deployment_id, body),
});
