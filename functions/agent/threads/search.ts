import { searchScope } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { deploymentParams, threadSearch } from "../../../shared/agent/run-schemas.ts";
import { searchThreads } from "../../../shared/agent/threads.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/search: filter by ids, metadata, values, status; sort and page.
export const handler = defineHandler({
  params: deploymentParams,
  body: threadSearch,
  handle: async ({ params, body, tenantId }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const auth = await searchScope("threads:search", body);
    const { threads, total } = await searchThreads(d, { ...body, auth });
    const next = body.offset + threads.length;
    return reply(200, threads, {
      "x-pagination-total": String(total),
      ...(next < total ? { "x-pagination-next": String(next) } : {}),
    });
  },
});
