import { AssistantSearchBody, DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { Assistant, searchAssistants } from "../../../shared/agent/assistants.ts";
import { searchScope } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler, reply, z } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  body: AssistantSearchBody,
  response: z.array(Assistant.partial()),
  handle: async ({ tenantId, params, body }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const auth = await searchScope("assistants:search", body);
    const { assistants, total } = await searchAssistants(d, { ...body, auth });
    const next = body.offset + body.limit;
    // The SDK pages with X-Pagination-Next (includePagination); absent on the last page.
    const headers: Record<string, string> = { "X-Pagination-Total": String(total) };
    if (next < total) headers["X-Pagination-Next"] = String(next);
    return reply(200, assistants, headers);
  },
});
