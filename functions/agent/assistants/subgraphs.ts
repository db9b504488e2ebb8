import { AssistantParams, RecurseQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  query: RecurseQuery,
  handle: ({ params, query, server, caller }) =>
    server.assistants.subgraphs(caller, params.deployment_id, params.assistant_id, undefined, query.recurse),
});
