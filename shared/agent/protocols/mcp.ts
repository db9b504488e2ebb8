import { Validator } from "@langchain/core/utils/json_schema";
import { z } from "zod";
import { JSON_RPC, type RpcErrorAnswer, RpcFailure, rpcError, rpcResult } from "../../http/json-rpc.ts";
import { isRecord } from "../../llm/json.ts";
import { logger } from "../../log.ts";
import { graphOf, searchAssistants } from "../assistants/assistants.ts";
import { graphSchemas } from "../assistants/graph-schemas.ts";
import { inputCheckSchema } from "../assistants/input-check.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import type { Caller } from "../ops/caller.ts";
import { searchScope } from "../ops/checks.ts";
import type { AgentServer } from "../ops/server.ts";
import { waitRun } from "../runs/join.ts";
import { runCreate } from "../runs/schemas.ts";

// The agent server's MCP endpoint (POST /agents/{deployment_id}/mcp), as the reference LangGraph server serves
// it: the Model Context Protocol over Streamable HTTP, stateless (no Mcp-Session-Id, no server-opened stream:
// every request is answered with one application/json body, or one SSE stream of its answers for a client that
// accepts only text/event-stream; notifications and client responses with 202). One tool per
// assistant of the deployment: named after the assistant (a default assistant's name is its graph id),
// described by its description, its inputSchema the graph's input JSON schema (as GET /assistants/{id}/schemas
// answers it). tools/call runs the assistant statelessly with the arguments as input (the path of POST
// /runs/wait) and answers the run's final values as JSON text. JSON-RPC 2.0, written by hand (initialize,
// ping, tools/list, tools/call); anything malformed is answered with a JSON-RPC error object, never a 5xx.

/** The protocol revisions this endpoint speaks (the SDK's list); the newest is offered to anyone else. */
export const MCP_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];
const LATEST = MCP_PROTOCOL_VERSIONS[0];
const SERVER_INFO = { name: "LangGraph", version: "0.1.0" };

const { PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR } = JSON_RPC;
/** Transport-level refusals (the SDK's servers use -32000 for these). */
const SERVER_ERROR = -32000;

const rpcId = z.union([z.string(), z.number()]);
const params = z.record(z.string(), z.unknown());
const Request = z.object({
  jsonrpc: z.literal("2.0"),
  id: rpcId,
  method: z.string(),
  params: params.optional(),
});
const Notification = z.object({ jsonrpc: z.literal("2.0"), method: z.string(), params: params.optional() });
/** A client's answer to a server request (this server sends none; accepted and dropped). */
const ClientResponse = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: rpcId, result: z.unknown() }),
  z.object({ jsonrpc: z.literal("2.0"), id: rpcId.nullable(), error: z.unknown() }),
]);
const InitializeParams = z.looseObject({ protocolVersion: z.string() });
const CallParams = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

type RpcAnswer = ReturnType<typeof rpcResult> | RpcErrorAnswer;

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  assistant_id: string;
}

/** An object schema MCP accepts (`type: "object"` is required of an inputSchema). */
function objectSchema(schema: Record<string, unknown> | null): Record<string, unknown> {
  if (schema?.type !== "object") return { type: "object", properties: {} };
  return schema;
}

/**
 * The deployment's tools: one per assistant of a graph its active revision serves, oldest first. Names are
 * unique: an assistant whose name an older one already has is named `<name>-<assistant_id>`.
 */
export async function mcpTools(d: AgentDeployment): Promise<McpTool[]> {
  const served = new Set(d.graphs.filter((g) => !g.error).map((g) => g.graph_id));
  const { assistants } = await searchAssistants(d, {
    // Custom auth: only the assistants the user may see are their tools.
    auth: await searchScope("assistants:search", {}),
    limit: Number.MAX_SAFE_INTEGER,
    offset: 0,
    sort_by: "created_at",
    sort_order: "asc",
  });
  const schemas = new Map<string, Record<string, unknown>>();
  const inputSchema = async (graphId: string) => {
    let s = schemas.get(graphId);
    if (!s) {
      try {
        s = objectSchema(graphSchemas(graphId, await graphOf(d, graphId)).input_schema);
      } catch (err) {
        logger.warn("mcp: no input schema for graph", { graph_id: graphId, error: err });
        s = objectSchema(null);
      }
      schemas.set(graphId, s);
    }
    return s;
  };
  const taken = new Set<string>();
  const tools: McpTool[] = [];
  for (const a of assistants) {
    if (!a.assistant_id || !a.graph_id || !served.has(a.graph_id)) continue;
    let name = a.name || a.graph_id;
    if (taken.has(name)) name = `${name}-${a.assistant_id}`;
    taken.add(name);
    tools.push({
      name,
      ...(a.description ? { description: a.description } : {}),
      inputSchema: await inputSchema(a.graph_id),
      assistant_id: a.assistant_id,
    });
  }
  return tools;
}

/** The JSON Schema draft a schema names (`$schema`), as the validator calls it; draft-07 when it names none. */
function draftOf(schema: Record<string, unknown>): "7" | "2019-09" | "2020-12" {
  const named = typeof schema.$schema === "string" ? schema.$schema : "";
  return named.includes("2020-12") ? "2020-12" : named.includes("2019-09") ? "2019-09" : "7";
}

/**
 * Arguments checked against the tool's input schema before anything runs, as MCP servers do: a mismatch is an
 * invalid-params error naming where and why (the MCP spec's "invalid arguments" protocol error).
 */
export function checkArguments(
  tool: Pick<McpTool, "name" | "inputSchema">,
  args: Record<string, unknown>,
): void {
  let result: { valid: boolean; errors: { instanceLocation: string; error: string }[] };
  try {
    const schema = inputCheckSchema(tool.inputSchema);
    result = new Validator(schema as never, draftOf(schema), false).validate(args);
  } catch {
    // A schema the validator cannot read checks nothing (the run validates what the graph needs).
    return;
  }
  if (result.valid) return;
  const why = result.errors
    .slice(-3)
    .map((e) => `${e.instanceLocation.replace(/^#/, "") || "/"}: ${e.error}`)
    .join("; ");
  throw new RpcFailure(INVALID_PARAMS, `Invalid arguments for tool ${tool.name}: ${why}`);
}

/** Runs the tool's assistant statelessly with `args` as input: the MCP result of its final values. */
async function callTool(
  server: AgentServer,
  caller: Caller,
  d: AgentDeployment,
  tool: McpTool,
  args: Record<string, unknown>,
) {
  const body = runCreate.parse({ assistant_id: tool.assistant_id, input: args });
  const run = await server.runs.startRun(caller, d, null, body);
  const values = await waitRun(d, run.thread_id, run.run_id);
  // A failed run ends with its error as its values (as POST /runs/wait answers it): a tool execution error.
  if (isRecord(values) && isRecord(values.__error__)) {
    const e = values.__error__;
    const text = [e.error, e.message].filter((x) => typeof x === "string" && x).join(": ") || "Run failed";
    return { content: [{ type: "text", text }], isError: true };
  }
  return {
    content: [{ type: "text", text: JSON.stringify(values ?? null) }],
    ...(isRecord(values) ? { structuredContent: values } : {}),
    isError: false,
  };
}

async function dispatch(
  server: AgentServer,
  caller: Caller,
  deployment: () => Promise<AgentDeployment>,
  method: string,
  p: Record<string, unknown>,
): Promise<unknown> {
  switch (method) {
    case "initialize": {
      const init = InitializeParams.safeParse(p);
      if (!init.success) throw new RpcFailure(INVALID_PARAMS, "initialize needs a protocolVersion");
      const requested = init.data.protocolVersion;
      return {
        protocolVersion: MCP_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST,
        capabilities: { tools: { listChanged: false } },
        serverInfo: SERVER_INFO,
      };
    }
    case "ping":
      return {};
    case "tools/list": {
      const tools = await mcpTools(await deployment());
      return { tools: tools.map(({ assistant_id: _a, ...t }) => t) };
    }
    case "tools/call": {
      const call = CallParams.safeParse(p);
      if (!call.success)
        throw new RpcFailure(INVALID_PARAMS, "tools/call needs a tool name and object arguments");
      const d = await deployment();
      const tool = (await mcpTools(d)).find((t) => t.name === call.data.name);
      if (!tool) throw new RpcFailure(INVALID_PARAMS, `Unknown tool: ${call.data.name}`);
      checkArguments(tool, call.data.arguments ?? {});
      try {
        return await callTool(server, caller, d, tool, call.data.arguments ?? {});
      } catch (err) {
        // The run could not be made or waited for (a bad input, a rolled-back run): the tool failed.
        const message = err instanceof Error ? err.message : String(err);
        return { content: [{ type: "text", text: message }], isError: true };
      }
    }
    default:
      throw new RpcFailure(METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
}

/** One JSON-RPC message → its response, or undefined for a notification or a client's response. */
async function handleMessage(
  server: AgentServer,
  caller: Caller,
  deployment: () => Promise<AgentDeployment>,
  message: unknown,
): Promise<RpcAnswer | undefined> {
  const req = Request.safeParse(message);
  if (!req.success) {
    if (Notification.safeParse(message).success || ClientResponse.safeParse(message).success)
      return undefined;
    const id = isRecord(message) ? rpcId.safeParse(message.id) : undefined;
    return rpcError(id?.success ? id.data : null, INVALID_REQUEST, "Invalid Request");
  }
  const { id, method } = req.data;
  try {
    return rpcResult(id, await dispatch(server, caller, deployment, method, req.data.params ?? {}));
  } catch (err) {
    if (err instanceof RpcFailure) return rpcError(id, err.code, err.message);
    logger.warn("mcp: request failed", { method, error: err });
    return rpcError(id, INTERNAL_ERROR, err instanceof Error ? err.message : "Internal error");
  }
}

export interface McpAnswer {
  status: number;
  body?: unknown;
  headers: Record<string, string>;
}

const JSON_HEADERS = { "content-type": "application/json" };
const refuse = (status: number, code: number, message: string): McpAnswer => ({
  status,
  body: rpcError(null, code, message),
  headers: JSON_HEADERS,
});

/**
 * A POST to the MCP endpoint: `raw` is the request body, `headers` its headers (lower-case names). The
 * deployment is read only when a method needs it.
 */
export async function handleMcpPost(
  server: AgentServer,
  caller: Caller,
  deployment: () => Promise<AgentDeployment>,
  raw: Buffer,
  headers: Record<string, string | undefined>,
): Promise<McpAnswer> {
  const header = (name: string) => headers[name] ?? headers[name.toLowerCase()];
  const accept = header("accept");
  const json = !accept || /application\/json|\*\/\*|application\/\*/i.test(accept);
  // A client that takes only an SSE stream gets each answer as one `message` event of a stream that then ends.
  const sse = !json && /text\/event-stream/i.test(accept ?? "");
  if (!json && !sse)
    return refuse(
      406,
      SERVER_ERROR,
      "Not Acceptable: the client must accept application/json or text/event-stream",
    );
  const type = header("content-type");
  if (type && !/application\/json/i.test(type))
    return refuse(415, SERVER_ERROR, "Unsupported Media Type: the body must be application/json");
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch {
    return refuse(400, PARSE_ERROR, "Parse error");
  }
  const batch = Array.isArray(parsed);
  const messages: unknown[] = batch ? (parsed as unknown[]) : [parsed];
  if (!messages.length) return refuse(400, INVALID_REQUEST, "Invalid Request: an empty batch");
  const isInit = messages.some((m) => isRecord(m) && m.method === "initialize");
  // After initialize, a client names the protocol revision it speaks in a header (absent: assume a 2025-03-26 one).
  const version = header("mcp-protocol-version");
  if (!isInit && version && !MCP_PROTOCOL_VERSIONS.includes(version))
    return refuse(
      400,
      SERVER_ERROR,
      `Bad Request: unsupported protocol version ${version} (supported: ${MCP_PROTOCOL_VERSIONS.join(", ")})`,
    );
  let d: Promise<AgentDeployment> | undefined;
  const once = () => {
    d ??= deployment();
    return d;
  };
  const answers = (await Promise.all(messages.map((m) => handleMessage(server, caller, once, m)))).filter(
    (a): a is RpcAnswer => a !== undefined,
  );
  if (!answers.length) return { status: 202, headers: {} };
  const onlyInvalid = !batch && "error" in answers[0] && answers[0].error.code === INVALID_REQUEST;
  if (sse && !onlyInvalid)
    return {
      status: 200,
      body: answers.map((a) => `event: message\ndata: ${JSON.stringify(a)}\n\n`).join(""),
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    };
  return { status: onlyInvalid ? 400 : 200, body: batch ? answers : answers[0], headers: JSON_HEADERS };
}

/** GET and DELETE: a stateless server opens no SSE stream and has no session to end. */
export const mcpMethodNotAllowed = (): McpAnswer => ({
  status: 405,
  body: rpcError(
    null,
    SERVER_ERROR,
    "Method not allowed: this MCP endpoint is stateless; POST JSON-RPC to it",
  ),
  headers: { ...JSON_HEADERS, allow: "POST" },
});
