import { z } from "zod";
import { arr, isRecord, pathString, str } from "./json.ts";

// Clients attach their own fields, so every object schema here is loose (extra keys pass through).
const extras = z.record(z.string(), z.unknown());

const TextBlock = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
  annotations: z.array(z.record(z.string(), z.unknown())).optional(),
  extras: extras.optional(),
});

const ReasoningBlock = z.looseObject({
  type: z.literal("reasoning"),
  text: z.string(),
  extras: extras.optional(),
});

const MEDIA_TYPES = ["image", "file", "audio", "video"] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

function mediaBlock<T extends MediaType>(type: T) {
  return z
    .looseObject({
      type: z.literal(type),
      url: z.string().optional(),
      base64: z.string().optional(),
      id: z.string().optional(),
      mime_type: z.string().optional(),
    })
    .refine((b) => b.url !== undefined || b.base64 !== undefined || b.id !== undefined, {
      message: "one of url, base64 or id is required",
    });
}

const ToolCallBlock = z.looseObject({
  type: z.literal("tool_call"),
  name: z.string().optional(),
  args: z.record(z.string(), z.unknown()),
  id: z.string().optional(),
});

const ServerToolCallBlock = z.looseObject({
  type: z.literal("server_tool_call"),
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
});

const ServerToolResultBlock = z.looseObject({
  type: z.literal("server_tool_result"),
  tool_call_id: z.string(),
  id: z.string().optional(),
  status: z.enum(["success", "error"]),
  output: z.unknown().optional(),
});

export const ContentBlockSchema = z.discriminatedUnion("type", [
  TextBlock,
  ReasoningBlock,
  mediaBlock("image"),
  mediaBlock("file"),
  mediaBlock("audio"),
  mediaBlock("video"),
  ToolCallBlock,
  ServerToolCallBlock,
  ServerToolResultBlock,
]);

const tokenCount = z.number().int().nonnegative();
export const UsageMetadataSchema = z.looseObject({
  input_tokens: tokenCount.optional(),
  output_tokens: tokenCount.optional(),
  total_tokens: tokenCount.optional(),
  input_token_details: z.record(z.string(), tokenCount).optional(),
  output_token_details: z.record(z.string(), tokenCount).optional(),
  input_cost: z.number().optional(),
  output_cost: z.number().optional(),
  total_cost: z.number().optional(),
  input_cost_details: z.record(z.string(), z.number()).optional(),
  output_cost_details: z.record(z.string(), z.number()).optional(),
});

export const ROLES = ["system", "reasoning", "user", "assistant", "tool"] as const;
export const MessageSchema = z.looseObject({
  role: z.enum(ROLES),
  content: z.array(ContentBlockSchema),
  tool_call_id: z.string().optional(),
  usage_metadata: UsageMetadataSchema.optional(),
});

export const MessagesSchema = z.looseObject({ messages: z.array(MessageSchema) });

export type ContentBlock = z.infer<typeof ContentBlockSchema>;
export type UsageMetadata = z.infer<typeof UsageMetadataSchema>;
export type Role = (typeof ROLES)[number];
export type Message = z.infer<typeof MessageSchema>;

export type ValidationResult = { ok: true; messages: Message[] } | { ok: false; errors: string[] };

export function formatIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): string[] {
  return issues.map((issue) => {
    // zod's default wording for a missing key is "expected X, received undefined"; "required" reads better.
    const message =
      issue.code === "invalid_type" && / received undefined$/.test(issue.message)
        ? "is required"
        : issue.message;
    return `${pathString([...prefix, ...issue.path])}: ${message}`;
  });
}

// Tool results must answer a call made earlier in the conversation; raw values are walked so this
// also reports on lists that failed schema validation.
function checkToolCallLinks(messages: readonly unknown[], label: (index: number) => string): string[] {
  const errors: string[] = [];
  const seen = new Set<string>();
  messages.forEach((message, i) => {
    if (!isRecord(message)) return;
    const id = message.tool_call_id;
    if (id !== undefined && message.role !== "tool") {
      errors.push(`${label(i)}.tool_call_id: only allowed on messages with role "tool"`);
    } else if (typeof id === "string" && !seen.has(id)) {
      errors.push(`${label(i)}.tool_call_id: does not match any earlier assistant tool call`);
    }
    if (message.role !== "assistant") return;
    for (const block of arr(message.content) ?? []) {
      const blockId = isRecord(block) && block.type === "tool_call" ? str(block.id) : undefined;
      if (blockId !== undefined) seen.add(blockId);
    }
    for (const call of arr(message.tool_calls) ?? []) {
      const callId = isRecord(call) ? str(call.id) : undefined;
      if (callId !== undefined) seen.add(callId);
    }
  });
  return errors;
}

/** Schema + tool-call linkage check of a message list, naming each message with `label`. */
export function validateMessageList(
  messages: readonly unknown[],
  label: (index: number) => string = (i) => `messages[${i}]`,
): { messages: Message[]; errors: string[] } {
  const errors: string[] = [];
  const parsedMessages: Message[] = [];
  messages.forEach((message, i) => {
    const parsed = MessageSchema.safeParse(message);
    if (parsed.success) parsedMessages.push(parsed.data);
    else errors.push(...formatIssues(parsed.error.issues).map((e) => prefixed(label(i), e)));
  });
  errors.push(...checkToolCallLinks(messages, label));
  return { messages: parsedMessages, errors };
}

function prefixed(label: string, error: string): string {
  return error.startsWith("(root):") ? `${label}${error.slice("(root)".length)}` : `${label}.${error}`;
}

/** Validates a platform payload `{ messages: [...] }`. */
export function validateMessages(value: unknown): ValidationResult {
  const raw = isRecord(value) ? value.messages : undefined;
  if (!Array.isArray(raw)) {
    const parsed = MessagesSchema.safeParse(value);
    return {
      ok: false,
      errors: parsed.success ? ["messages: is required"] : formatIssues(parsed.error.issues),
    };
  }
  const { messages, errors } = validateMessageList(raw);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, messages };
}
