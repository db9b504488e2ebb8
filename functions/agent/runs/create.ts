import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { runCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs: a background run (answers at once, pending).
export const handler = defineHandler({
  params: threadParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const { run, location } = await runs.create(
      callerOf(tenantId),
      params.deployment_id,
      params.thread_id,
      body,
    );
    return reply(200, run, { "content-location": location });
  },
});
