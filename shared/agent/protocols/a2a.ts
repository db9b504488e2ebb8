import { HttpError, NotFound } from "../../errors.ts";
import { JSON_RPC, type RpcErrorAnswer, RpcFailure, type RpcId, rpcError } from "../../http/json-rpc.ts";
import { isRecord } from "../../llm/json.ts";
import type { RunRecord } from "../../records/agent.ts";
import { resolveAssistant } from "../assistants/assistants.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import type { Caller } from "../ops/caller.ts";
import { threadAccess } from "../ops/checks.ts";
import type { AgentServer } from "../ops/server.ts";
import { runFrames, waitRun } from "../runs/join.ts";
import { ACTIVE, cancelRun, getRunItem } from "../runs/runs.ts";
import { runCreate } from "../runs/schemas.ts";
import { threadIds } from "../threads/threads.ts";

// The Agent2Agent protocol 0.3 (JSON-RPC 2.0) on the agent server, as the reference LangGraph server speaks it:
// a context (`contextId`) is a thread (a new one when absent), a task is a run (taskId = run id), a message's
// text parts become `{messages: [{role: "user", content}]}` (data parts are merged into the input), and the
// run's last AI message is the task's artifact and status message.

export const A2A_PROTOCOL_VERSION = "0.3.0";

/** JSON-RPC and A2A error codes. */
export const RPC = {
  ...JSON_RPC,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  UNSUPPORTED_OPERATION: -32004,
} as const;

export type TaskState =
  | "submitted"
  | "working"
  | "input-required"
  | "completed"
  | "canceled"
  | "failed"
  | "rejected"
  | "auth-required"
  | "unknown";

interface A2AMessage {
  kind: "message";
  role: "user" | "agent";
  messageId: string;
  parts: Record<string, unknown>[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
}

/** A parsed JSON-RPC request, or the error object to answer. */
export type ParsedRequest =
  | { ok: true; id: RpcId; method: string; params: Record<string, unknown> }
  | { ok: false; response: RpcErrorAnswer };

/** Reads a JSON-RPC 2.0 request from a raw body: a parse error, an invalid request, or the call. */
export function parseRequest(raw: Buffer | string): ParsedRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString());
  } catch {
    return { ok: false, response: rpcError(null, RPC.PARSE_ERROR, "Parse error: the body is not JSON") };
  }
  if (!isRecord(body))
    return {
      ok: false,
      response: rpcError(null, RPC.INVALID_REQUEST, "Invalid Request: not a JSON-RPC object"),
    };
  const id = body.id;
  const goodId = id === undefined || id === null || typeof id === "string" || typeof id === "number";
  const rid: RpcId = goodId ? ((id ?? null) as RpcId) : null;
  if (body.jsonrpc !== "2.0" || !goodId || typeof body.method !== "string")
    return {
      ok: false,
      response: rpcError(
        rid,
        RPC.INVALID_REQUEST,
        'Invalid Request: needs jsonrpc "2.0", a method and an id',
      ),
    };
  if (body.params !== undefined && !isRecord(body.params))
    return {
      ok: false,
      response: rpcError(rid, RPC.INVALID_PARAMS, "Invalid params: params must be an object"),
    };
  return { ok: true, id: rid, method: body.method, params: (body.params ?? {}) as Record<string, unknown> };
}

export const METHODS = ["message/send", "message/stream", "tasks/get", "tasks/cancel"] as const;
const KNOWN_UNSUPPORTED = [
  "tasks/resubscribe",
  "tasks/pushNotificationConfig/set",
  "tasks/pushNotificationConfig/get",
  "tasks/pushNotificationConfig/list",
  "tasks/pushNotificationConfig/delete",
  "agent/getAuthenticatedExtendedCard",
];

/** Checks a method name: known and served, known but not served (push notifications...), or unknown. */
export function checkMethod(method: string): void {
  if ((METHODS as readonly string[]).includes(method)) return;
  if (KNOWN_UNSUPPORTED.includes(method))
    throw new RpcFailure(RPC.UNSUPPORTED_OPERATION, `This operation is not supported: ${method}`);
  throw new RpcFailure(RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `message` of message/send or message/stream, checked. */
function messageOf(params: Record<string, unknown>): A2AMessage {
  const m = params.message;
  if (!isRecord(m)) throw new RpcFailure(RPC.INVALID_PARAMS, "Invalid params: params.message is required");
  if (!Array.isArray(m.parts) || m.parts.length === 0 || !m.parts.every(isRecord))
    throw new RpcFailure(
      RPC.INVALID_PARAMS,
      "Invalid params: message.parts must be a non-empty array of parts",
    );
  if (m.role !== undefined && m.role !== "user" && m.role !== "agent")
    throw new RpcFailure(RPC.INVALID_PARAMS, 'Invalid params: message.role must be "user" or "agent"');
  for (const k of ["messageId", "contextId", "taskId"] as const)
    if (m[k] !== undefined && typeof m[k] !== "string")
      throw new RpcFailure(RPC.INVALID_PARAMS, `Invalid params: message.${k} must be a string`);
  if (typeof m.contextId === "string" && !UUID.test(m.contextId))
    throw new RpcFailure(
      RPC.INVALID_PARAMS,
      "Invalid params: message.contextId must be a UUID (a thread id)",
    );
  return m as unknown as A2AMessage;
}

/** The graph input of a message: its text parts as one user message, its data parts merged in. */
export function inputOf(message: A2AMessage): Record<string, unknown> {
  const text = message.parts
    .filter((p) => (p.kind ?? p.type) === "text" && typeof p.text === "string")
    .map((p) => p.text as string)
    .join("\n");
  const input: Record<string, unknown> = {};
  for (const p of message.parts)
    if ((p.kind ?? p.type) === "data" && isRecord(p.data)) Object.assign(input, p.data);
  if (text) input.messages = [{ role: "user", content: text }];
  if (!Object.keys(input).length)
    throw new RpcFailure(RPC.INVALID_PARAMS, "Invalid params: the message has no text or data part");
  return input;
}

/** The text of a LangChain message's content (a string, or content blocks). */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((b) => (typeof b === "string" ? b : isRecord(b) && b.type === "text" ? String(b.text ?? "") : ""))
      .join("");
  return "";
}

/** A message as the run's values hold it (plain or LangChain-serialized): its role and text. */
function readMessage(m: unknown): { ai: boolean; human: boolean; text: string } | undefined {
  if (!isRecord(m)) return undefined;
  if (m.lc === 1 && Array.isArray(m.id) && isRecord(m.kwargs)) {
    const cls = String(m.id.at(-1));
    return {
      ai: cls.startsWith("AIMessage"),
      human: cls.startsWith("HumanMessage"),
      text: contentText(m.kwargs.content),
    };
  }
  const type = m.type ?? m.role;
  return {
    ai: type === "ai" || type === "assistant" || type === "AIMessageChunk",
    human: type === "human" || type === "user",
    text: contentText(m.content),
  };
}

/** The text of the last AI message of a run's final values (undefined when there is none). */
export function lastAiText(values: unknown): string | undefined {
  if (!isRecord(values) || !Array.isArray(values.messages)) return undefined;
  for (let i = values.messages.length - 1; i >= 0; i--) {
    const m = readMessage(values.messages[i]);
    if (m?.ai) return m.text;
  }
  return undefined;
}

/** A run's status as an A2A task state. */
export function taskState(run: Pick<RunRecord, "status" | "cancel_action">): TaskState {
  switch (run.status) {
    case "pending":
      return "submitted";
    case "running":
      return "working";
    case "success":
      return "completed";
    case "error":
    case "timeout":
      return "failed";
    case "interrupted":
      // A user's cancel ends a run interrupted with its cancel flag; an interrupt() in the graph asks for input.
      return run.cancel_action ? "canceled" : "input-required";
    default:
      return "unknown";
  }
}

const FINAL_STATES: TaskState[] = ["completed", "failed", "canceled", "input-required", "rejected"];

const agentMessage = (text: string, contextId: string, taskId: string): A2AMessage => ({
  kind: "message",
  role: "agent",
  messageId: crypto.randomUUID(),
  parts: [{ kind: "text", text }],
  contextId,
  taskId,
});

/** The reply of a completed task as its one artifact. */
const resultArtifact = (runId: string, text: string) => ({
  artifactId: `${runId}-result`,
  name: "Assistant Response",
  parts: [{ kind: "text", text }],
});

/** The user message a run was created from (its input's last user message), for a task's history. */
function userMessageOf(run: RunRecord): A2AMessage | undefined {
  const input = run.kwargs?.input;
  if (!isRecord(input) || !Array.isArray(input.messages)) return undefined;
  const m = readMessage(input.messages.at(-1));
  if (!m?.human) return undefined;
  const meta = isRecord(run.metadata?.a2a) ? run.metadata.a2a : {};
  return {
    kind: "message",
    role: "user",
    messageId: typeof meta.message_id === "string" ? meta.message_id : `${run.run_id}-input`,
    parts: [{ kind: "text", text: m.text }],
    contextId: run.thread_id,
    taskId: run.run_id,
  };
}

/** What a finished run says: its reply text (the last AI message) or its error. */
interface Outcome {
  text?: string;
  error?: string;
}

/** A run as an A2A task (history: the user's message and, once there is one, the agent's reply). */
export function toTask(run: RunRecord, outcome: Outcome = {}, historyLength?: number) {
  const state = taskState(run);
  const text = outcome.text ?? (state === "failed" ? (outcome.error ?? run.error?.message) : undefined);
  const reply = text !== undefined ? agentMessage(text, run.thread_id, run.run_id) : undefined;
  const history = [userMessageOf(run), reply].filter((m): m is A2AMessage => m !== undefined);
  return {
    kind: "task" as const,
    id: run.run_id,
    contextId: run.thread_id,
    status: {
      state,
      ...(reply && FINAL_STATES.includes(state) ? { message: reply } : {}),
      timestamp: run.updated_at,
    },
    artifacts:
      state === "completed" && outcome.text !== undefined ? [resultArtifact(run.run_id, outcome.text)] : [],
    history: historyLength === undefined ? history : historyLength <= 0 ? [] : history.slice(-historyLength),
    metadata: { thread_id: run.thread_id, run_id: run.run_id, assistant_id: run.assistant_id },
  };
}

/** Creates the run of a message on its context's thread (a new thread when there is no contextId). */
async function startTask(
  server: AgentServer,
  caller: Caller,
  d: AgentDeployment,
  assistantId: string,
  params: Record<string, unknown>,
) {
  const message = messageOf(params);
  const input = inputOf(message);
  const threadId = message.contextId ?? crypto.randomUUID();
  const body = runCreate.parse({
    assistant_id: assistantId,
    input,
    if_not_exists: "create",
    metadata: {
      a2a: { message_id: message.messageId ?? null, ...(message.taskId ? { task_id: message.taskId } : {}) },
    },
  });
  const run = await server.runs.startRun(caller, d, threadId, body);
  return { threadId: run.thread_id, runId: run.run_id };
}

/** The outcome of a finished run: its final values' last AI message, or its error. */
async function outcomeOf(d: AgentDeployment, run: RunRecord, values?: unknown): Promise<Outcome> {
  if (run.status === "error" || run.status === "timeout")
    return { error: run.error ? `${run.error.error}: ${run.error.message}` : `Run ${run.status}` };
  if (!["success", "interrupted"].includes(run.status)) return {};
  const v =
    values !== undefined ? values : await waitRun(d, run.thread_id, run.run_id).catch(() => undefined);
  return { text: lastAiText(v) };
}

async function mustRun(d: AgentDeployment, threadId: string, runId: string): Promise<RunRecord> {
  const run = await getRunItem(d, threadId, runId);
  if (!run) throw new RpcFailure(RPC.TASK_NOT_FOUND, "Task not found", { taskId: runId });
  return run;
}

/** message/send: runs the message to its end and answers the task. */
export async function messageSend(
  server: AgentServer,
  caller: Caller,
  d: AgentDeployment,
  assistantId: string,
  params: Record<string, unknown>,
) {
  const { threadId, runId } = await startTask(server, caller, d, assistantId, params);
  let values: unknown;
  try {
    values = await waitRun(d, threadId, runId);
  } catch (e) {
    if (!(e instanceof NotFound)) throw e;
  }
  const run = await mustRun(d, threadId, runId);
  const historyLength = numberOr(
    isRecord(params.configuration) ? params.configuration.historyLength : undefined,
  );
  return toTask(run, await outcomeOf(d, run, values), historyLength);
}

const numberOr = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

/**
 * message/stream: the task (submitted), a working status once the run starts, then at its end the reply as an
 * artifact and the final status (`final: true`), each one a JSON-RPC response of the request's id.
 */
export async function messageStream(
  server: AgentServer,
  caller: Caller,
  d: AgentDeployment,
  assistantId: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{ threadId: string; runId: string; events: AsyncGenerator<unknown> }> {
  // The run is created (or the call refused) before the stream starts, so a bad call answers a plain error.
  const { threadId, runId } = await startTask(server, caller, d, assistantId, params);
  const created = await mustRun(d, threadId, runId);
  return { threadId, runId, events: streamEvents(d, created, signal) };
}

async function* streamEvents(
  d: AgentDeployment,
  created: RunRecord,
  signal?: AbortSignal,
): AsyncGenerator<unknown> {
  const { thread_id: threadId, run_id: runId } = created;
  yield toTask({ ...created, status: "pending" });
  const status = (state: TaskState, final: boolean, message?: A2AMessage) => ({
    kind: "status-update" as const,
    taskId: runId,
    contextId: threadId,
    status: { state, ...(message ? { message } : {}), timestamp: new Date().toISOString() },
    final,
  });
  let working = false;
  let lastValues: unknown;
  let error: string | undefined;
  for await (const f of runFrames(d, threadId, runId, { signal })) {
    if (!working) {
      working = true;
      yield status("working", false);
    }
    if (f.event === "values") lastValues = f.data;
    if (f.event === "error" && isRecord(f.data))
      error = [f.data.error, f.data.message].filter((x) => typeof x === "string").join(": ");
  }
  if (signal?.aborted) return;
  const run = await mustRun(d, threadId, runId);
  const outcome = await outcomeOf(d, run, lastValues);
  const state = taskState(run);
  if (state === "completed" && outcome.text !== undefined)
    yield {
      kind: "artifact-update" as const,
      taskId: runId,
      contextId: threadId,
      artifact: resultArtifact(runId, outcome.text),
      append: false,
      lastChunk: true,
    };
  const text = outcome.text ?? (state === "failed" ? (outcome.error ?? error) : undefined);
  yield status(state, true, text !== undefined ? agentMessage(text, threadId, runId) : undefined);
}

/**
 * Finds a task's run: on its context's thread when the caller names it, else among the deployment's threads.
 * A run on a thread the user may not read (custom auth) is not found.
 */
async function findRun(d: AgentDeployment, params: Record<string, unknown>): Promise<RunRecord> {
  const run = await findAnyRun(d, params);
  try {
    await threadAccess(d, run.thread_id, "read");
  } catch (err) {
    if (err instanceof NotFound)
      throw new RpcFailure(RPC.TASK_NOT_FOUND, "Task not found", { taskId: run.run_id });
    throw err;
  }
  return run;
}

async function findAnyRun(d: AgentDeployment, params: Record<string, unknown>): Promise<RunRecord> {
  const id = params.id;
  if (typeof id !== "string" || !id)
    throw new RpcFailure(RPC.INVALID_PARAMS, "Invalid params: params.id is required");
  const meta = isRecord(params.metadata) ? params.metadata : {};
  const hint = [params.contextId, meta.contextId, meta.thread_id].find((v) => typeof v === "string") as
    | string
    | undefined;
  if (hint) {
    const run = await getRunItem(d, hint, id);
    if (run) return run;
  }
  // No index by run id: look the run up under each thread of the deployment, a batch at a time.
  const ids = await threadIds(d);
  for (let i = 0; i < ids.length; i += 25) {
    const found = (await Promise.all(ids.slice(i, i + 25).map((t) => getRunItem(d, t, id)))).find(Boolean);
    if (found) return found;
  }
  throw new RpcFailure(RPC.TASK_NOT_FOUND, "Task not found", { taskId: id });
}

/** tasks/get: the task of a run, its reply once it ended. */
export async function tasksGet(d: AgentDeployment, params: Record<string, unknown>) {
  const run = await findRun(d, params);
  return toTask(run, await outcomeOf(d, run), numberOr(params.historyLength));
}

/** tasks/cancel: cancels an active run (as an interrupt); a task already ended is not cancelable. */
export async function tasksCancel(d: AgentDeployment, params: Record<string, unknown>) {
  const run = await findRun(d, params);
  if (!ACTIVE.includes(run.status))
    throw new RpcFailure(RPC.TASK_NOT_CANCELABLE, "Task cannot be canceled", {
      taskId: run.run_id,
      state: taskState(run),
    });
  await cancelRun(d, run, "interrupt", true);
  const after = await mustRun(d, run.thread_id, run.run_id);
  return toTask({
    ...after,
    cancel_action: after.cancel_action ?? "interrupt",
    status: ACTIVE.includes(after.status) ? "interrupted" : after.status,
  });
}

/** An error thrown while answering a call, as a JSON-RPC error object. */
export function toRpcError(id: RpcId, e: unknown) {
  if (e instanceof RpcFailure) return rpcError(id, e.code, e.message, e.data);
  if (e instanceof HttpError) {
    const code =
      e.status === 404 || e.status === 400 || e.status === 422 ? RPC.INVALID_PARAMS : RPC.INTERNAL_ERROR;
    return rpcError(id, code, e.message, { status: e.status });
  }
  return rpcError(id, RPC.INTERNAL_ERROR, "Internal error");
}

/** The agent card of an assistant: its a2a endpoint, JSON-RPC, streaming, one skill for its graph. */
export async function agentCard(d: AgentDeployment, assistantId: string, url: string) {
  const a = await resolveAssistant(d, assistantId);
  const description = a.description ?? `${a.name} (graph ${a.graph_id}) on the agent server`;
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: a.name,
    description,
    url,
    preferredTransport: "JSONRPC",
    version: String(a.version),
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key" } },
    security: [{ apiKey: [] }],
    skills: [
      {
        id: `${a.graph_id}-main`,
        name: a.name,
        description,
        tags: [a.graph_id],
        examples: [],
        inputModes: ["text/plain", "application/json"],
        outputModes: ["text/plain", "application/json"],
      },
    ],
  };
}

const HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/**
 * The public URL of a path of the deployment, from the request: its scheme and host, and whatever came before
 * `/agents/{deployment_id}` in its path (an API stage).
 */
export function deploymentUrl(
  req: { headers: Record<string, string | undefined>; rawPath?: string; domainName?: string },
  deploymentId: string,
  path: string,
): string {
  const proto = req.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase();
  const host = [req.headers.host, req.domainName].find((h) => typeof h === "string" && HOST.test(h));
  const scheme =
    proto === "http" || proto === "https"
      ? proto
      : host?.startsWith("127.0.0.1") || host?.startsWith("localhost")
        ? "http"
        : "https";
  const marker = `/agents/${deploymentId}`;
  const at = req.rawPath?.indexOf(`${marker}/`) ?? -1;
  const prefix = at > 0 ? req.rawPath!.slice(0, at) : "";
  return `${scheme}://${host ?? "localhost"}${prefix}${marker}${path}`;
}
