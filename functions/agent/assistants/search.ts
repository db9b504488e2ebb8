import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { Assistant, AssistantSearchBody, DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply, z } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  body: AssistantSearchBody,
  response: z.array(Assistant.partial()),
  handle: async ({ tenantId, params, body }) => {
    const { assistants: found, total } = await assistants.search(
      callerOf(tenantId),
      params.deployment_id,
      body,
    );
    const next = body.offset + body.limit;
    // The SDK pages with X-Pagination-Next (includePagination); absent on the last page.
    const headers: Record<string, string> = { "X-Pagination-Total": String(total) };
    if (next < total) headers["X-Pagination-Next"] = String(next);
    return reply(200, found, headers);
  },
});
