import { type Attributes, type AttrValue, setOwn } from "./model.ts";

// Chat messages as the GenAI conventions, OpenLLMetry and the Vercel AI SDK write them on spans, turned into the
// OpenAI-style messages the LLM trace format reads (shared/llm/normalize.ts): role, content (text or blocks),
// tool_calls, tool_call_id.

type Json = Record<string, unknown>;
export type ChatMessage = Json;

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A JSON attribute's value, or the attribute itself when it is not JSON text. */
export function parsed(v: AttrValue | undefined): unknown {
  if (typeof v !== "string") return v;
  const t = v.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[") && !t.startsWith('"')) return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

const argumentsText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v ?? {}));
const resultText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v ?? null));

function toolCall(id: unknown, name: unknown, args: unknown) {
  return {
    id: typeof id === "string" ? id : String(id ?? ""),
    type: "function",
    function: { name: typeof name === "string" ? name : String(name ?? ""), arguments: argumentsText(args) },
  };
}

/** Text blocks alone become one string; anything else stays a block list. */
function contentOf(blocks: Json[]): string | Json[] {
  if (blocks.every((b) => b.type === "text")) return blocks.map((b) => String(b.text ?? "")).join("");
  return blocks;
}

/** GenAI semantic conventions (gen_ai.input.messages / output.messages): `{role, parts: [...]}`. */
export function semconvMessages(value: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: ChatMessage[] = [];
  for (const m of value) {
    if (!isObj(m)) continue;
    const role = typeof m.role === "string" ? m.role : "user";
    if (!Array.isArray(m.parts)) {
      out.push({ ...m, role });
      continue;
    }
    const blocks: Json[] = [];
    const calls: unknown[] = [];
    for (const p of m.parts) {
      if (!isObj(p)) continue;
      if (p.type === "text") blocks.push({ type: "text", text: String(p.content ?? "") });
      else if (p.type === "tool_call") calls.push(toolCall(p.id, p.name, p.arguments));
      else if (p.type === "tool_call_response")
        out.push({ role: "tool", tool_call_id: String(p.id ?? ""), content: resultText(p.response) });
      else blocks.push(p);
    }
    if (blocks.length || calls.length)
      out.push({ role, content: contentOf(blocks), ...(calls.length ? { tool_calls: calls } : {}) });
  }
  return out;
}

/** Vercel AI SDK messages (ai.prompt.messages): content parts text, tool-call, tool-result, image, file. */
export function vercelMessages(value: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: ChatMessage[] = [];
  for (const m of value) {
    if (!isObj(m)) continue;
    const role = typeof m.role === "string" ? m.role : "user";
    if (!Array.isArray(m.content)) {
      out.push({ role, content: m.content ?? "" });
      continue;
    }
    const blocks: Json[] = [];
    const calls: unknown[] = [];
    for (const p of m.content) {
      if (!isObj(p)) continue;
      if (p.type === "text") blocks.push({ type: "text", text: String(p.text ?? "") });
      else if (p.type === "tool-call") calls.push(toolCall(p.toolCallId, p.toolName, p.input ?? p.args));
      else if (p.type === "tool-result")
        out.push({
          role: "tool",
          tool_call_id: String(p.toolCallId ?? ""),
          content: resultText(p.output ?? p.result),
        });
      else blocks.push(p);
    }
    if (blocks.length || calls.length || role !== "tool")
      out.push({ role, content: contentOf(blocks), ...(calls.length ? { tool_calls: calls } : {}) });
  }
  return out;
}

/** The assistant message of a Vercel AI SDK response: ai.response.text and ai.response.toolCalls. */
export function vercelResponse(
  text: AttrValue | undefined,
  toolCalls: AttrValue | undefined,
): ChatMessage | undefined {
  const calls = parsed(toolCalls);
  const list = Array.isArray(calls)
    ? calls.filter(isObj).map((c) => toolCall(c.toolCallId, c.toolName, c.input ?? c.args))
    : [];
  if (typeof text !== "string" && !list.length) return undefined;
  return {
    role: "assistant",
    content: typeof text === "string" ? text : "",
    ...(list.length ? { tool_calls: list } : {}),
  };
}

const INDEXED = /^gen_ai\.(prompt|completion)\.(\d{1,4})\.(.+)$/;

/**
 * Messages written one attribute per field (OpenLLMetry, older GenAI conventions): `gen_ai.prompt.0.role`,
 * `.content`, `.message.role`/`.message.content`, `.tool_calls.0.name`/`.arguments`/`.id`, `.tool_call_id`.
 */
export function indexedMessages(attrs: Attributes, kind: "prompt" | "completion") {
  const byIndex = new Map<number, Json>();
  const used: string[] = [];
  for (const [key, value] of Object.entries(attrs)) {
    const m = INDEXED.exec(key);
    if (!m || m[1] !== kind) continue;
    used.push(key);
    const i = Number(m[2]);
    const msg = byIndex.get(i) ?? {};
    byIndex.set(i, msg);
    const path = m[3]!.replace(/^message\./, "");
    const call = /^tool_calls\.(\d{1,3})\.(name|arguments|id)$/.exec(path);
    if (call) {
      if (!Array.isArray(msg.tool_calls)) msg.tool_calls = [];
      const calls = msg.tool_calls as Json[];
      const n = Number(call[1]);
      if (!calls[n]) calls[n] = { type: "function", function: {} };
      const c = calls[n];
      if (call[2] === "id") c.id = value;
      else (c.function as Json)[call[2]!] = call[2] === "arguments" ? argumentsText(value) : value;
    } else if (path === "role" || path === "content" || path === "tool_call_id" || path === "finish_reason") {
      msg[path] = path === "content" ? parsed(value) : value;
    } else setOwn(msg, path, value);
  }
  const messages = [...byIndex.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, m]) => {
      if (Array.isArray(m.tool_calls)) m.tool_calls = m.tool_calls.filter(Boolean);
      return { role: kind === "prompt" ? "user" : "assistant", ...m };
    });
  return { messages, used };
}
