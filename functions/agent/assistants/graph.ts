import { AssistantParams, XrayQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  query: XrayQuery,
  handle: ({ params, query, server, caller }) =>
    server.assistants.graph(caller, params.deployment_id, params.assistant_id, query.xray),
});
