import { AssistantParams, RecurseQuery } from "../../../shared/agent/assistant-api.ts";
import { graphOf } from "../../../shared/agent/assistants.ts";
import { authorizedAssistant } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { subgraphSchemas } from "../../../shared/agent/graph-schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  query: RecurseQuery,
  handle: async ({ tenantId, params, query }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const a = await authorizedAssistant(d, params.assistant_id);
    return subgraphSchemas(a.graph_id, await graphOf(d, a.graph_id), undefined, query.recurse);
  },
});
