import { agentCard, deploymentUrl } from "../../../shared/agent/a2a.ts";
import { DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler, z } from "../../handler.ts";

// GET /agents/{deployment_id}/.well-known/agent-card.json?assistant_id=: the A2A (0.3) agent card of an
// assistant (or a graph id: its default assistant), its url the assistant's a2a endpoint.
export const handler = defineHandler({
  params: DeploymentParams,
  query: z.object({ assistant_id: z.string().min(1).max(256) }),
  handle: async ({ params, query, tenantId, event }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const url = deploymentUrl(
      { headers: event.headers ?? {}, rawPath: event.rawPath, domainName: event.requestContext?.domainName },
      params.deployment_id,
      `/a2a/${encodeURIComponent(query.assistant_id)}`,
    );
    return agentCard(d, query.assistant_id, url);
  },
});
