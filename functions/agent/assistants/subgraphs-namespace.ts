import { AssistantParams, RecurseQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, z } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams.extend({ namespace: z.string().min(1) }),
  query: RecurseQuery,
  handle: ({ params, query, server, caller }) =>
    server.assistants.subgraphs(
      caller,
      params.deployment_id,
      params.assistant_id,
      params.namespace,
      query.recurse,
    ),
});
