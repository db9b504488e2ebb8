import { convertBlocks } from "./blocks.ts";
import { type Message, type Role, validateMessageList } from "./format.ts";
import { arr, isRecord, type Json, pathString, rec } from "./json.ts";
import { convertMessage, roleOf } from "./messages.ts";

type Path = (string | number)[];

export interface NormalizedLlmIO {
  input_messages: Message[];
  output_messages: Message[];
  format_errors: string[];
}

/**
 * Converts an llm run's inputs/outputs (platform, OpenAI, Anthropic, LangChain encodings) to platform
 * messages. Never throws: anything not understood is reported in format_errors and skipped.
 */
export function normalizeLlmIO(inputs: unknown, outputs: unknown): NormalizedLlmIO {
  const format_errors: string[] = [];
  const input_messages = guarded("inputs", format_errors, () => inputMessages(inputs, format_errors));
  const output_messages = guarded("outputs", format_errors, () => outputMessages(outputs, format_errors));
  // One pass over both lists, so an output tool result may answer an input tool call.
  const n = input_messages.length;
  const label = (i: number) => (i < n ? `input_messages[${i}]` : `output_messages[${i - n}]`);
  guarded("messages", format_errors, () => {
    format_errors.push(...validateMessageList([...input_messages, ...output_messages], label).errors);
    return [];
  });
  return { input_messages, output_messages, format_errors };
}

// Last line of defence for the never-throws contract (e.g. exotic objects that are not plain JSON).
function guarded(where: string, errors: string[], fn: () => Message[]): Message[] {
  try {
    return fn();
  } catch (err) {
    errors.push(`${where}: could not be read (${err instanceof Error ? err.message : String(err)})`);
    return [];
  }
}

function textMessage(role: Role, text: string): Message {
  return { role, content: [{ type: "text", text }] };
}

function isMessageLike(value: Json): boolean {
  if (value.lc === 1 || typeof value.role === "string") return true;
  return typeof value.type === "string" && roleOf(value.type) !== undefined;
}

/** A message list; nested arrays of messages are LangChain batches and are flattened. */
function messageList(list: unknown[], path: Path, errors: string[], defaultRole: Role): Message[] {
  return list.flatMap((item, i) => {
    const isBatch = Array.isArray(item) && !(item.length === 2 && typeof item[0] === "string");
    return isBatch
      ? messageList(item, [...path, i], errors, defaultRole)
      : convertMessage(item, [...path, i], errors, defaultRole);
  });
}

function inputMessages(inputs: unknown, errors: string[]): Message[] {
  if (inputs === undefined || inputs === null) return [];
  if (typeof inputs === "string") return [textMessage("user", inputs)];
  if (Array.isArray(inputs)) return messageList(inputs, ["inputs"], errors, "user");
  if (!isRecord(inputs)) return unrecognized("inputs", errors);
  const system = systemMessages(inputs, errors);
  if (Array.isArray(inputs.messages)) {
    return [...system, ...messageList(inputs.messages, ["inputs", "messages"], errors, "user")];
  }
  // LangChain completion-style (non-chat) LLM runs.
  const prompts = arr(inputs.prompts) ?? (typeof inputs.prompt === "string" ? [inputs.prompt] : undefined);
  if (prompts) return [...system, ...messageList(prompts, ["inputs", "prompts"], errors, "user")];
  // OpenAI Responses API.
  if (typeof inputs.input === "string") return [...system, textMessage("user", inputs.input)];
  if (Array.isArray(inputs.input))
    return [...system, ...messageList(inputs.input, ["inputs", "input"], errors, "user")];
  if (isMessageLike(inputs)) return [...system, ...convertMessage(inputs, ["inputs"], errors, "user")];
  if (system.length > 0 || Object.keys(inputs).length === 0) return system;
  return unrecognized("inputs", errors);
}

// Anthropic passes the system prompt beside the messages; OpenAI Responses calls it instructions.
function systemMessages(inputs: Json, errors: string[]): Message[] {
  const out: Message[] = [];
  for (const key of ["system", "instructions"]) {
    const value = inputs[key];
    if (value === undefined || value === null) continue;
    const content = convertBlocks(value, ["inputs", key], errors);
    if (content.length > 0) out.push({ role: "system", content });
  }
  return out;
}

function outputMessages(outputs: unknown, errors: string[]): Message[] {
  if (outputs === undefined || outputs === null) return [];
  if (typeof outputs === "string") return [textMessage("assistant", outputs)];
  if (Array.isArray(outputs)) {
    if (outputs.length === 2 && typeof outputs[0] === "string") {
      return convertMessage(outputs, ["outputs"], errors, "assistant");
    }
    return messageList(outputs, ["outputs"], errors, "assistant");
  }
  if (!isRecord(outputs)) return unrecognized("outputs", errors);
  if (Array.isArray(outputs.choices)) return choices(outputs.choices, errors);
  if (Array.isArray(outputs.generations))
    return generations(outputs.generations, ["outputs", "generations"], errors);
  if (Array.isArray(outputs.messages))
    return messageList(outputs.messages, ["outputs", "messages"], errors, "assistant");
  for (const key of ["message", "output"]) {
    const value = outputs[key];
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) return messageList(value, ["outputs", key], errors, "assistant");
    return convertMessage(value, ["outputs", key], errors, "assistant");
  }
  if (isMessageLike(outputs) || "content" in outputs) {
    return convertMessage(outputs, ["outputs"], errors, "assistant");
  }
  if (Object.keys(outputs).length === 0) return [];
  return unrecognized("outputs", errors);
}

function choices(list: unknown[], errors: string[]): Message[] {
  return list.flatMap((choice, i) => {
    const path = ["outputs", "choices", i];
    const c = rec(choice);
    if (c?.message !== undefined) return convertMessage(c.message, [...path, "message"], errors, "assistant");
    // Legacy completions API and aggregated stream deltas.
    if (typeof c?.text === "string") return [textMessage("assistant", c.text)];
    if (c?.delta !== undefined) return convertMessage(c.delta, [...path, "delta"], errors, "assistant");
    errors.push(`${pathString(path)}: choice has no message`);
    return [];
  });
}

function generations(list: unknown[], path: Path, errors: string[]): Message[] {
  return list.flatMap((gen, i): Message[] => {
    if (Array.isArray(gen)) return generations(gen, [...path, i], errors);
    const g = rec(gen);
    if (g?.message !== undefined && g.message !== null) {
      return convertMessage(g.message, [...path, i, "message"], errors, "assistant");
    }
    if (typeof g?.text === "string") return [textMessage("assistant", g.text)];
    errors.push(`${pathString([...path, i])}: generation has neither message nor text`);
    return [];
  });
}

function unrecognized(where: string, errors: string[]): Message[] {
  errors.push(`${where}: unrecognized LLM ${where} format`);
  return [];
}
