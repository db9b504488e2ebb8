import { deploymentParams, threadSearch } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/threads/search: filter by ids, metadata, values, status; sort and page.
export const handler = defineAgentHandler({
  params: deploymentParams,
  body: threadSearch,
  handle: async ({ params, body, server, caller }) => {
    const { threads: found, total } = await server.threads.search(caller, params.deployment_id, body);
    const next = body.offset + found.length;
    return reply(200, found, {
      "x-pagination-total": String(total),
      ...(next < total ? { "x-pagination-next": String(next) } : {}),
    });
  },
});
