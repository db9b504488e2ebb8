import { stateAtCheckpoint, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/state/checkpoint: the state at a checkpoint given as an object.
export const handler = defineAgentHandler({
  params: threadParams,
  body: stateAtCheckpoint,
  handle: ({ params, body, server, caller }) =>
    server.threads.state(caller, params.deployment_id, params.thread_id, body),
});
