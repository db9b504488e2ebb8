import type { UsageMetadata } from "./format.ts";
import { dig, isRecord, num, rec, str } from "./json.ts";

/** The parts of a run this module reads; everything is untrusted JSON. */
export interface LlmRunLike {
  inputs?: unknown;
  outputs?: unknown;
  extra?: unknown;
  metadata?: unknown;
  start_time?: unknown;
  events?: unknown;
}

const TOKEN_KEYS = ["input_tokens", "output_tokens", "total_tokens"] as const;
const COST_KEYS = ["input_cost", "output_cost", "total_cost"] as const;
const DETAIL_KEYS = [
  "input_token_details",
  "output_token_details",
  "input_cost_details",
  "output_cost_details",
];

/** Finds the run's reported token usage (LangChain usage_metadata first, then vendor usage fields). */
export function extractUsage(runLike: LlmRunLike): UsageMetadata | null {
  const run: LlmRunLike = isRecord(runLike) ? runLike : {};
  const outputs = run.outputs;
  const standard = [
    dig(outputs, "usage_metadata"),
    ...lastMessageUsages(outputs),
    dig(run.extra, "metadata", "usage_metadata"),
    dig(run.metadata, "usage_metadata"),
  ];
  for (const candidate of standard) {
    const usage = cleanUsage(candidate);
    if (usage) return usage;
  }
  for (const candidate of [
    dig(outputs, "usage"),
    dig(outputs, "llm_output", "token_usage"),
    dig(outputs, "llm_output", "usage"),
  ]) {
    const usage = vendorUsage(candidate);
    if (usage) return usage;
  }
  return null;
}

function messageUsage(message: unknown): unknown {
  return dig(message, "usage_metadata") ?? dig(message, "kwargs", "usage_metadata");
}

// The usage of a reply sits on the last output message, whatever wraps it.
function lastMessageUsages(outputs: unknown): unknown[] {
  let last = dig(outputs, "messages", -1);
  while (Array.isArray(last)) last = last[last.length - 1]; // LangChain batches nest one level
  const generations = dig(outputs, "generations");
  const flat = Array.isArray(generations) ? generations.flat(2).reverse() : [];
  return [
    messageUsage(last),
    ...flat.map((g) => messageUsage(dig(g, "message"))),
    messageUsage(dig(outputs, "output")),
    messageUsage(dig(outputs, "message")),
    dig(outputs, "kwargs", "usage_metadata"),
  ];
}

/** Keeps the well-formed numeric fields of a usage_metadata object; null when it holds no usage. */
export function cleanUsage(raw: unknown): UsageMetadata | null {
  if (!isRecord(raw)) return null;
  const usage: UsageMetadata = {};
  for (const key of [...TOKEN_KEYS, ...COST_KEYS]) {
    const value = num(raw[key]);
    if (value !== undefined && value >= 0) usage[key] = value;
  }
  if (Object.keys(usage).length === 0) return null;
  for (const key of DETAIL_KEYS) {
    const details = numberMap(raw[key]);
    if (details) usage[key] = details;
  }
  return withTotal(usage);
}

function numberMap(raw: unknown): Record<string, number> | undefined {
  if (!isRecord(raw)) return undefined;
  const entries = Object.entries(raw).filter(([, v]) => num(v) !== undefined && (v as number) >= 0);
  return entries.length > 0 ? (Object.fromEntries(entries) as Record<string, number>) : undefined;
}

function withTotal(usage: UsageMetadata): UsageMetadata {
  if (
    usage.total_tokens === undefined &&
    (usage.input_tokens !== undefined || usage.output_tokens !== undefined)
  ) {
    usage.total_tokens = (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
  }
  return usage;
}

function details(pairs: [string, unknown][]): Record<string, number> | undefined {
  const kept = pairs.filter(([, v]) => num(v) !== undefined) as [string, number][];
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** Converts OpenAI (chat/Responses, snake or LangChain camelCase) and Anthropic usage objects. */
export function vendorUsage(raw: unknown): UsageMetadata | null {
  const u = rec(raw);
  if (!u) return null;
  const prompt = num(u.prompt_tokens) ?? num(u.promptTokens);
  const completion = num(u.completion_tokens) ?? num(u.completionTokens);
  if (prompt !== undefined || completion !== undefined) {
    const inDetails = rec(u.prompt_tokens_details) ?? {};
    const outDetails = rec(u.completion_tokens_details) ?? {};
    return build(prompt, completion, num(u.total_tokens) ?? num(u.totalTokens), {
      input_token_details: details([
        ["cache_read", inDetails.cached_tokens],
        ["audio", inDetails.audio_tokens],
      ]),
      output_token_details: details([
        ["reasoning", outDetails.reasoning_tokens],
        ["audio", outDetails.audio_tokens],
      ]),
    });
  }
  const input = num(u.input_tokens);
  const output = num(u.output_tokens);
  if (input === undefined && output === undefined) return null;
  // Anthropic reports cache reads/writes beside input_tokens; OpenAI Responses already includes them.
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheCreation = num(u.cache_creation_input_tokens);
  const total = input === undefined ? undefined : input + (cacheRead ?? 0) + (cacheCreation ?? 0);
  return build(total, output, num(u.total_tokens), {
    input_token_details: details([
      ["cache_read", cacheRead ?? dig(u, "input_tokens_details", "cached_tokens")],
      ["cache_creation", cacheCreation],
    ]),
    output_token_details: details([["reasoning", dig(u, "output_tokens_details", "reasoning_tokens")]]),
  });
}

function build(
  input: number | undefined,
  output: number | undefined,
  total: number | undefined,
  extra: Pick<UsageMetadata, "input_token_details" | "output_token_details">,
): UsageMetadata {
  const usage: UsageMetadata = {};
  if (input !== undefined) usage.input_tokens = input;
  if (output !== undefined) usage.output_tokens = output;
  if (total !== undefined) usage.total_tokens = total;
  if (extra.input_token_details) usage.input_token_details = extra.input_token_details;
  if (extra.output_token_details) usage.output_token_details = extra.output_token_details;
  return withTotal(usage);
}

function firstString(candidates: unknown[]): string | null {
  for (const candidate of candidates) {
    const value = str(candidate)?.trim();
    if (value) return value;
  }
  return null;
}

/** The model name the run reports, most authoritative source first. */
export function modelNameOf(runLike: LlmRunLike): string | null {
  const run: LlmRunLike = isRecord(runLike) ? runLike : {};
  const params = dig(run.extra, "invocation_params");
  return firstString([
    dig(run.extra, "metadata", "ls_model_name"),
    dig(run.metadata, "ls_model_name"),
    dig(run.inputs, "model"),
    dig(run.inputs, "model_name"),
    dig(params, "model"),
    dig(params, "model_name"),
    // Vendors echo the resolved model in the response.
    dig(run.outputs, "model"),
    dig(run.outputs, "llm_output", "model_name"),
  ]);
}

export function providerOf(run: LlmRunLike): string | null {
  return firstString([dig(run, "extra", "metadata", "ls_provider"), dig(run, "metadata", "ls_provider")]);
}
