import { runParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs/{run_id} (a rolled-back run is gone: 404).
export const handler = defineAgentHandler({
  params: runParams,
  handle: ({ params, server, caller }) =>
    server.runs.get(caller, params.deployment_id, params.thread_id, params.run_id),
});
