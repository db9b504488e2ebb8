import { AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import * as protocols from "../../../shared/agent/protocols/index.ts";
import { defineAgentHandler, reply } from "../handler.ts";

// POST /agents/{deployment_id}/a2a/{assistant_id}: the Agent2Agent protocol 0.3 (JSON-RPC 2.0) of an assistant:
// message/send, message/stream (SSE of JSON-RPC responses), tasks/get, tasks/cancel (shared/agent/protocols/a2a.ts).
// Every problem with the call is answered as a JSON-RPC error object (HTTP 200), never a 5xx.
export const handler = defineAgentHandler({
  params: AssistantParams,
  rawBody: true,
  handle: async ({ params, raw, server, caller }) => {
    const out = await protocols.a2aCall(server, caller, params.deployment_id, params.assistant_id, raw);
    if ("json" in out) return reply(200, out.json);
    return reply.stream(out.body, out.headers, out.onClose);
  },
});
