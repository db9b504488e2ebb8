import { AssistantParams, XrayQuery } from "../../../shared/agent/assistant-api.ts";
import { graphOf } from "../../../shared/agent/assistants.ts";
import { authorizedAssistant } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { drawGraph } from "../../../shared/agent/graph-schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  query: XrayQuery,
  handle: async ({ tenantId, params, query }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const a = await authorizedAssistant(d, params.assistant_id);
    return drawGraph(await graphOf(d, a.graph_id), a.config, query.xray);
  },
});
