import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";
import o200k_base from "js-tiktoken/ranks/o200k_base";
import type { Message } from "./format.ts";

type EncodingName = "o200k_base" | "cl100k_base";

// Only the two rank tables counted here: js-tiktoken's main entry bundles all six (5.6 MB in every ingesting Lambda).
const RANKS = { o200k_base, cl100k_base };

// Building an encoder parses a multi-megabyte rank table, so each is built once, on first use.
const encoders = new Map<EncodingName, Tiktoken>();

function encoder(name: EncodingName): Tiktoken {
  let enc = encoders.get(name);
  if (!enc) {
    enc = new Tiktoken(RANKS[name]);
    encoders.set(name, enc);
  }
  return enc;
}

/** OpenAI's newer families (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o-series) use o200k_base. */
export function encodingFor(modelName?: string | null): EncodingName {
  const model = (modelName ?? "").toLowerCase();
  return /(^|[/:.\s_-])(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o[134](?![0-9]))/.test(model)
    ? "o200k_base"
    : "cl100k_base";
}

// OpenAI's cookbook accounting: each message costs 3 framing tokens and every reply is primed with 3.
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY = 3;

function countText(enc: Tiktoken, text: string): number {
  // Special-token text such as "<|endoftext|>" is counted as ordinary text instead of throwing.
  return text === "" ? 0 : enc.encode(text, [], []).length;
}

function messageText(message: Message): string[] {
  const texts: string[] = [];
  for (const block of message.content) {
    if (block.type === "text" || block.type === "reasoning") texts.push(block.text);
    // Tool-call arguments are generated/billed tokens too; without them a tool-call reply counts as ~0.
    else if (block.type === "tool_call") texts.push(block.name ?? "", JSON.stringify(block.args));
  }
  return texts;
}

/** Offline token estimate for a text or a message list (used when a run reports no usage). */
export function estimateTokens(
  messagesOrText: readonly Message[] | string,
  modelName?: string | null,
): number {
  const enc = encoder(encodingFor(modelName));
  if (typeof messagesOrText === "string") return countText(enc, messagesOrText);
  if (messagesOrText.length === 0) return 0;
  let total = TOKENS_PER_REPLY;
  for (const message of messagesOrText) {
    total += TOKENS_PER_MESSAGE;
    for (const text of messageText(message)) total += countText(enc, text);
  }
  return total;
}
