import { NotFound } from "../../errors.ts";
import { JSON_RPC, type RpcId, rpcResult } from "../../http/json-rpc.ts";
import { logger } from "../../log.ts";
import { resolveAssistant } from "../assistants/assistants.ts";
import { authorize, matchesAuthFilters } from "../auth/scope.ts";
import type { Caller } from "../ops/caller.ts";
import type { Streamed } from "../ops/runs.ts";
import type { AgentServer } from "../ops/server.ts";
import { onClientGone } from "../runs/join.ts";
import { SSE_HEADERS } from "../stream/stream.ts";
import {
  agentCard,
  checkMethod,
  messageSend,
  messageStream,
  parseRequest,
  tasksCancel,
  tasksGet,
  toRpcError,
} from "./a2a.ts";
import { handleMcpPost, type McpAnswer } from "./mcp.ts";

// The protocols the agent server speaks besides its REST API — MCP and A2A — as their handlers call them. They sit
// above the operations layer, as handlers do: the deployment is looked up for the caller by the server's one
// lookup, every run they start goes through the server's `runs.startRun`, every thread they read through the
// caller's access to it.

/** POST /mcp: one JSON-RPC message or batch (the deployment is read only when a method needs it). */
export const mcpPost = (
  server: AgentServer,
  caller: Caller,
  deploymentId: string,
  raw: Buffer,
  headers: Record<string, string | undefined>,
): Promise<McpAnswer> =>
  handleMcpPost(server, caller, () => server.deployment(caller, deploymentId), raw, headers);

const sse = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;

/**
 * An A2A call (JSON-RPC 2.0) to an assistant: message/send, message/stream (SSE of JSON-RPC responses),
 * tasks/get, tasks/cancel. Every problem with the call is answered as a JSON-RPC error object, never a 5xx.
 */
export async function a2aCall(
  server: AgentServer,
  caller: Caller,
  deploymentId: string,
  assistantId: string,
  raw: Buffer,
): Promise<{ json: unknown } | Streamed> {
  const call = parseRequest(raw);
  if (!call.ok) return { json: call.response };
  const id: RpcId = call.id;
  try {
    checkMethod(call.method);
    const d = await server.deployment(caller, deploymentId);
    switch (call.method) {
      case "message/send":
        return { json: rpcResult(id, await messageSend(server, caller, d, assistantId, call.params)) };
      case "tasks/get":
        return { json: rpcResult(id, await tasksGet(d, call.params)) };
      case "tasks/cancel":
        return { json: rpcResult(id, await tasksCancel(d, call.params)) };
      default: {
        const gone = new AbortController();
        const s = await messageStream(server, caller, d, assistantId, call.params, gone.signal);
        async function* frames() {
          try {
            for await (const event of s.events) yield sse(rpcResult(id, event));
          } catch (e) {
            logger.warn("a2a stream failed", { run_id: s.runId, error: String(e) });
            yield sse(toRpcError(id, e));
          }
        }
        return {
          body: frames(),
          headers: { ...SSE_HEADERS },
          onClose: () => {
            gone.abort();
            void onClientGone(d, s.threadId, s.runId);
          },
        };
      }
    }
  } catch (e) {
    const answer = toRpcError(id, e);
    if (answer.error.code === JSON_RPC.INTERNAL_ERROR)
      logger.error("a2a call failed", { method: call.method, error: String(e) });
    return { json: answer };
  }
}

/** The A2A agent card of an assistant (or a graph id: its default assistant), if the caller may read it. */
export async function a2aCard(
  server: AgentServer,
  caller: Caller,
  deploymentId: string,
  assistantId: string,
  url: string,
) {
  const d = await server.deployment(caller, deploymentId);
  const filters = await authorize("assistants:read", { assistant_id: assistantId });
  const a = await resolveAssistant(d, assistantId);
  if (!matchesAuthFilters(a.metadata, filters)) throw new NotFound("Assistant not found");
  return agentCard(d, a.assistant_id, url);
}

/** The public URL of a path of the deployment, from the request (an A2A card's endpoint). */
export { deploymentUrl } from "./a2a.ts";
/** GET and DELETE /mcp: a stateless server opens no SSE stream and has no session to end (405). */
export { mcpMethodNotAllowed } from "./mcp.ts";
