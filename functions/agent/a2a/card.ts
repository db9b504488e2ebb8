import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import * as protocols from "../../../shared/agent/protocols/index.ts";
import { defineAgentHandler, z } from "../handler.ts";

// GET /agents/{deployment_id}/.well-known/agent-card.json?assistant_id=: the A2A (0.3) agent card of an
// assistant (or a graph id: its default assistant), its url the assistant's a2a endpoint.
export const handler = defineAgentHandler({
  params: DeploymentParams,
  query: z.object({ assistant_id: z.string().min(1).max(256) }),
  handle: ({ params, query, event, server, caller }) => {
    const url = protocols.deploymentUrl(
      { headers: event.headers ?? {}, rawPath: event.rawPath, domainName: event.requestContext?.domainName },
      params.deployment_id,
      `/a2a/${encodeURIComponent(query.assistant_id)}`,
    );
    return protocols.a2aCard(server, caller, params.deployment_id, query.assistant_id, url);
  },
});
