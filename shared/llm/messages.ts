import { convertBlocks, convertContent, type Part, parseArgs } from "./blocks.ts";
import {
  type ContentBlock,
  formatIssues,
  type Message,
  MessageSchema,
  type Role,
  UsageMetadataSchema,
} from "./format.ts";
import { arr, describe, isRecord, type Json, pathString, rec, str } from "./json.ts";

type Path = (string | number)[];

const ROLE_ALIASES: Record<string, Role> = {
  user: "user",
  human: "user",
  assistant: "assistant",
  ai: "assistant",
  model: "assistant",
  system: "system",
  developer: "system",
  tool: "tool",
  function: "tool",
  reasoning: "reasoning",
};

/** Maps OpenAI/Anthropic roles, LangChain types ("ai") and class names ("AIMessageChunk") to platform roles. */
export function roleOf(name: string): Role | undefined {
  const key = name.toLowerCase().replace(/(message)?(chunk)?$/, "");
  return Object.hasOwn(ROLE_ALIASES, key) ? ROLE_ALIASES[key] : undefined;
}

// Vendor fields that a schema-valid message may still carry and that need converting.
const VENDOR_KEYS = ["tool_calls", "function_call", "reasoning_content", "additional_kwargs", "refusal"];
// Without a role, one of these must be present for an object to count as a message.
const MESSAGE_KEYS = ["content", "tool_calls", "function_call", "reasoning_content", "refusal"];

/** Converts one message in any supported encoding; may yield several (Anthropic tool results split out). */
export function convertMessage(raw: unknown, path: Path, errors: string[], defaultRole: Role): Message[] {
  if (typeof raw === "string") return [{ role: defaultRole, content: [{ type: "text", text: raw }] }];
  if (Array.isArray(raw)) {
    if (raw.length === 2 && typeof raw[0] === "string")
      return fromFields(tupleFields(raw), path, errors, defaultRole);
    errors.push(`${pathString(path)}: expected a message or a [role, content] pair`);
    return [];
  }
  if (!isRecord(raw)) {
    errors.push(`${pathString(path)}: expected a message object, got ${describe(raw)}`);
    return [];
  }
  if (raw.lc === 1 && Array.isArray(raw.id)) {
    // LangChain serialized constructor: the class name carries the role, kwargs the fields.
    const className = str(raw.id[raw.id.length - 1]) ?? "";
    const kwargs = rec(raw.kwargs) ?? {};
    return fromFields({ ...kwargs, type: className }, [...path, "kwargs"], errors, defaultRole);
  }
  if (typeof raw.type === "string" && isRecord(raw.data) && raw.content === undefined) {
    // LangChain Python messages_to_dict: {type, data: {content, ...}}.
    return fromFields({ ...raw.data, type: raw.type }, [...path, "data"], errors, defaultRole);
  }
  if (!VENDOR_KEYS.some((key) => key in raw)) {
    const platform = MessageSchema.safeParse(raw);
    if (platform.success) return [platform.data];
  }
  return fromFields(raw, path, errors, defaultRole);
}

function tupleFields(pair: unknown[]): Json {
  return { role: pair[0], content: pair[1] };
}

function resolveRole(fields: Json, path: Path, errors: string[], defaultRole: Role): Role | undefined {
  // role wins over type: LangChain ChatMessage and Anthropic replies ({type: "message"}) carry both.
  const name = str(fields.role) ?? str(fields.type);
  if (name === undefined || name === "message") {
    if (MESSAGE_KEYS.some((key) => fields[key] !== undefined)) return defaultRole;
    errors.push(`${pathString(path)}: not a message (no role, content or tool calls)`);
    return undefined;
  }
  const role = roleOf(name);
  if (role === undefined) errors.push(`${pathString(path)}: unknown message role ${JSON.stringify(name)}`);
  return role;
}

function fromFields(fields: Json, path: Path, errors: string[], defaultRole: Role): Message[] {
  const role = resolveRole(fields, path, errors, defaultRole);
  if (role === undefined) return [];
  const blocks: ContentBlock[] = [];
  const toolMessages: Message[] = [];
  const extra = rec(fields.additional_kwargs) ?? {};
  const reasoning = str(fields.reasoning_content) ?? str(extra.reasoning_content);
  if (reasoning) blocks.push({ type: "reasoning", text: reasoning });
  const contentPath = [...path, "content"];
  // A tool message's own content cannot hold further tool results, so it is never split.
  const parts: Part[] =
    role === "tool"
      ? convertBlocks(fields.content, contentPath, errors).map((block) => ({ block }))
      : convertContent(fields.content, contentPath, errors);
  for (const part of parts) {
    if ("block" in part) blocks.push(part.block);
    else toolMessages.push(part.toolMessage);
  }
  // OpenAI returns a refusal instead of content; it is still what the assistant said.
  if (typeof fields.refusal === "string" && fields.refusal !== "") {
    blocks.push({ type: "text", text: fields.refusal, extras: { refusal: true } });
  }
  blocks.push(...toolCalls(fields, blocks, path, errors));
  // Anthropic puts tool results first in the user turn, so they precede the remaining text.
  if (blocks.length === 0 && toolMessages.length > 0) return toolMessages;
  return [...toolMessages, withMetadata({ role, content: blocks }, fields, path, errors)];
}

function toolCalls(fields: Json, existing: ContentBlock[], path: Path, errors: string[]): ContentBlock[] {
  const seen = new Set(existing.flatMap((b) => (b.type === "tool_call" && b.id ? [b.id] : [])));
  const extra = rec(fields.additional_kwargs) ?? {};
  // LangChain's parsed tool_calls win over the raw OpenAI ones it also keeps in additional_kwargs.
  const [list, listPath] = Array.isArray(fields.tool_calls)
    ? [fields.tool_calls, [...path, "tool_calls"]]
    : [arr(extra.tool_calls) ?? [], [...path, "additional_kwargs", "tool_calls"]];
  const calls: ContentBlock[] = [];
  list.forEach((call, i) => {
    const block = toolCall(call, [...listPath, i], errors);
    if (block && (block.id === undefined || !seen.has(block.id))) calls.push(block);
    if (block?.id) seen.add(block.id);
  });
  const legacy = rec(fields.function_call);
  const legacyCall = legacy ? toolCall({ function: legacy }, [...path, "function_call"], errors) : null;
  if (legacyCall) calls.push(legacyCall);
  return calls;
}

function toolCall(
  call: unknown,
  path: Path,
  errors: string[],
): (ContentBlock & { type: "tool_call" }) | null {
  if (!isRecord(call)) {
    errors.push(`${pathString(path)}: expected a tool call object, got ${describe(call)}`);
    return null;
  }
  const fn = rec(call.function);
  const args = fn
    ? parseArgs(fn.arguments, [...path, "function", "arguments"], errors)
    : parseArgs(call.args, [...path, "args"], errors);
  const block: ContentBlock & { type: "tool_call" } = { type: "tool_call", args };
  const name = str(fn ? fn.name : call.name);
  if (name !== undefined) block.name = name;
  if (typeof call.id === "string") block.id = call.id;
  return block;
}

function withMetadata(message: Message, fields: Json, path: Path, errors: string[]): Message {
  for (const key of ["id", "name", "tool_call_id", "status"]) {
    if (typeof fields[key] === "string") message[key] = fields[key];
  }
  if (fields.usage_metadata !== undefined && fields.usage_metadata !== null) {
    const usage = UsageMetadataSchema.safeParse(fields.usage_metadata);
    if (usage.success) message.usage_metadata = usage.data;
    else errors.push(...formatIssues(usage.error.issues, [...path, "usage_metadata"]));
  }
  return message;
}
