import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, threadSearch } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/search: filter by ids, metadata, values, status; sort and page.
export const handler = defineHandler({
  params: deploymentParams,
  body: threadSearch,
  handle: async ({ params, body, tenantId }) => {
    const { threads: found, total } = await threads.search(callerOf(tenantId), params.deployment_id, body);
    const next = body.offset + found.length;
    return reply(200, found, {
      "x-pagination-total": String(total),
      ...(next < total ? { "x-pagination-next": String(next) } : {}),
    });
  },
});
