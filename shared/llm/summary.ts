import type { Message, UsageMetadata } from "./format.ts";
import { isRecord } from "./json.ts";
import { normalizeLlmIO } from "./normalize.ts";
import { computeCosts, findPrice, type PriceEntry } from "./prices.ts";
import { estimateTokens } from "./tokens.ts";
import { extractUsage, type LlmRunLike, modelNameOf, providerOf } from "./usage.ts";

export interface LlmRunSummary {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_token_details: Record<string, number> | null;
  completion_token_details: Record<string, number> | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  prompt_cost_details: Record<string, number> | null;
  completion_cost_details: Record<string, number> | null;
  /** True when any token count came from the offline tokenizer rather than the run's reported usage. */
  tokens_estimated: boolean;
  input_messages: Message[];
  output_messages: Message[];
  format_errors: string[];
}

/** Tokens, costs and normalized messages of an llm run. Never throws on malformed runs. */
export function summarizeLlmRun(run: LlmRunLike, priceEntries: readonly PriceEntry[]): LlmRunSummary {
  const r: LlmRunLike = isRecord(run) ? run : {};
  const { input_messages, output_messages, format_errors } = normalizeLlmIO(r.inputs, r.outputs);
  const model = modelNameOf(r);
  const reported = extractUsage(r);
  const usage: UsageMetadata = { ...reported };
  let tokens_estimated = false;
  // Fill in whichever side the run did not report, so partial usage still yields full totals.
  if (usage.input_tokens === undefined) {
    usage.input_tokens = estimateTokens(input_messages, model);
    tokens_estimated = true;
  }
  if (usage.output_tokens === undefined) {
    usage.output_tokens = estimateTokens(output_messages, model);
    tokens_estimated = true;
  }
  if (usage.total_tokens === undefined || tokens_estimated) {
    usage.total_tokens = usage.input_tokens + usage.output_tokens;
  }
  const price = findPrice(priceEntries, model, providerOf(r), r.start_time);
  const costs = computeCosts(usage, price);
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens,
    prompt_token_details: usage.input_token_details ?? null,
    completion_token_details: usage.output_token_details ?? null,
    prompt_cost: costs?.prompt_cost ?? null,
    completion_cost: costs?.completion_cost ?? null,
    total_cost: costs?.total_cost ?? null,
    prompt_cost_details: costs?.prompt_cost_details ?? null,
    completion_cost_details: costs?.completion_cost_details ?? null,
    tokens_estimated,
    input_messages,
    output_messages,
    format_errors,
  };
}

/** Time of the first streamed token: the first `new_token` event with a readable time, as an ISO string. */
export function firstTokenTime(events: unknown): string | null {
  if (!Array.isArray(events)) return null;
  for (const event of events) {
    if (!isRecord(event) || event.name !== "new_token") continue;
    const time = event.time;
    // Strings are kept verbatim: they may carry microseconds a Date would drop.
    if (typeof time === "string" && time.trim() !== "") return time;
    if (typeof time === "number" && Number.isFinite(time)) {
      const date = new Date(time);
      if (Number.isFinite(date.getTime())) return date.toISOString();
    }
  }
  return null;
}
