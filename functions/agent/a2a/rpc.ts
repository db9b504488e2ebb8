import {
  checkMethod,
  messageSend,
  messageStream,
  parseRequest,
  tasksCancel,
  tasksGet,
  toRpcError,
} from "../../../shared/agent/a2a.ts";
import { AssistantParams } from "../../../shared/agent/assistant-api.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { onClientGone, SSE_HEADERS } from "../../../shared/agent/stream.ts";
import { kick } from "../../../shared/agent/worker.ts";
import { JSON_RPC, type RpcId, rpcResult } from "../../../shared/http/json-rpc.ts";
import { logger as log } from "../../../shared/log.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/a2a/{assistant_id}: the Agent2Agent protocol 0.3 (JSON-RPC 2.0) of an assistant:
// message/send, message/stream (SSE of JSON-RPC responses), tasks/get, tasks/cancel (shared/agent/a2a.ts).
// Every problem with the call is answered as a JSON-RPC error object (HTTP 200), never a 5xx.
const sse = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;

export const handler = defineHandler({
  params: AssistantParams,
  rawBody: true,
  handle: async ({ params, raw, tenantId }) => {
    const call = parseRequest(raw);
    if (!call.ok) return reply(200, call.response);
    const id: RpcId = call.id;
    try {
      checkMethod(call.method);
      const d = await agentDeployment(tenantId, params.deployment_id);
      switch (call.method) {
        case "message/send":
          return reply(200, rpcResult(id, await messageSend(d, params.assistant_id, call.params, kick)));
        case "tasks/get":
          return reply(200, rpcResult(id, await tasksGet(d, call.params)));
        case "tasks/cancel":
          return reply(200, rpcResult(id, await tasksCancel(d, call.params)));
        default: {
          const gone = new AbortController();
          const s = await messageStream(d, params.assistant_id, call.params, kick, gone.signal);
          async function* frames() {
            try {
              for await (const event of s.events) yield sse(rpcResult(id, event));
            } catch (e) {
              log.warn("a2a stream failed", { run_id: s.runId, error: String(e) });
              yield sse(toRpcError(id, e));
            }
          }
          return reply.stream(frames(), { ...SSE_HEADERS }, () => {
            gone.abort();
            void onClientGone(d, s.threadId, s.runId);
          });
        }
      }
    } catch (e) {
      const answer = toRpcError(id, e);
      if (answer.error.code === JSON_RPC.INTERNAL_ERROR)
        log.error("a2a call failed", { method: call.method, error: String(e) });
      return reply(200, answer);
    }
  },
});
