import { Assistant, AssistantSearchBody, DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply, z } from "../handler.ts";

export const handler = defineAgentHandler({
  params: DeploymentParams,
  body: AssistantSearchBody,
  response: z.array(Assistant.partial()),
  handle: async ({ params, body, server, caller }) => {
    const { assistants: found, total } = await server.assistants.search(caller, params.deployment_id, body);
    const next = body.offset + body.limit;
    // The SDK pages with X-Pagination-Next (includePagination); absent on the last page.
    const headers: Record<string, string> = { "X-Pagination-Total": String(total) };
    if (next < total) headers["X-Pagination-Next"] = String(next);
    return reply(200, found, headers);
  },
});
