import { cronCreate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/runs/crons: a cron whose ticks run on the thread.
export const handler = defineAgentHandler({
  params: threadParams,
  body: cronCreate,
  handle: ({ params, body, server, caller }) =>
    server.crons.create(caller, params.deployment_id, params.thread_id, body),
});
