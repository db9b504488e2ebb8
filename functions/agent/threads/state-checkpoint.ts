import { callerOf, threads } from "../../../shared/agent/ops/index.ts";
import { stateAtCheckpoint, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/state/checkpoint: the state at a checkpoint given as an object.
export const handler = defineHandler({
  params: threadParams,
  body: stateAtCheckpoint,
  handle: ({ params, body, tenantId }) =>
    threads.state(callerOf(tenantId), params.deployment_id, params.thread_id, body),
});
