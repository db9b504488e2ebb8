import { stateUpdate, threadParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler } from "../handler.ts";

// POST /agents/{deployment_id}/threads/{thread_id}/state: update the state as if `as_node` had written it. Not
// while a run is pending or running on the thread (409, as the reference): that run would write over it.
export const handler = defineAgentHandler({
  params: threadParams,
  body: stateUpdate,
  handle: ({ params, body, server, caller }) =>
    server.threads.updateState(caller, params.deployment_id, params.thread_id, body),
});
