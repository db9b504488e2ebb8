import { safeRegex } from "../safe-regex.ts";
import type { UsageMetadata } from "./format.ts";
import { isRecord, toMillis } from "./json.ts";

/** Model names longer than this are not priced (real names are far shorter); it bounds every match's work. */
export const MAX_MODEL_NAME_LENGTH = 256;

/** One row of the model price map; prices are per token. */
export interface PriceEntry {
  id: string;
  name: string;
  /** Regex source tested against the run's model name. */
  match_pattern: string;
  /** When set, must equal the run's ls_provider. */
  provider?: string | null;
  prompt_cost: number;
  completion_cost: number;
  /** Per-token price by token type (keys of usage input_token_details), e.g. cache_read. */
  prompt_cost_details?: Record<string, number> | null;
  completion_cost_details?: Record<string, number> | null;
  /** ISO time from which the entry applies; null means it always applied. */
  start_time?: string | null;
}

export interface Costs {
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  prompt_cost_details: Record<string, number> | null;
  completion_cost_details: Record<string, number> | null;
}

// Patterns come from users; compile each once and treat invalid ones, and ones that could backtrack for too long
// (stored before that rule, or written around the API), as matching nothing.
const regexCache = new Map<string, RegExp | null>();

function compile(pattern: string): RegExp | null {
  if (!regexCache.has(pattern)) {
    const re = safeRegex(pattern);
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return regexCache.get(pattern) ?? null;
}

/** Does `entry` price `modelName`? Pattern and provider must both agree. */
export function priceMatches(entry: PriceEntry, modelName: string, provider?: string | null): boolean {
  if (typeof entry.match_pattern !== "string") return false;
  if (entry.provider && entry.provider.toLowerCase() !== (provider ?? "").toLowerCase()) return false;
  if (modelName.length > MAX_MODEL_NAME_LENGTH) return false; // bounds the work of every pattern
  return compile(entry.match_pattern)?.test(modelName) ?? false;
}

/**
 * The entry pricing a run: among matching entries active at the run's start, the latest start_time wins
 * (null counts as oldest); ties go to provider-specific entries, then to the longer pattern.
 * A run without a start time sees every entry as active.
 */
export function findPrice(
  entries: readonly PriceEntry[],
  modelName: string | null | undefined,
  provider?: string | null,
  runStartTime?: unknown,
): PriceEntry | null {
  if (!modelName) return null;
  const runMs = toMillis(runStartTime);
  let best: { entry: PriceEntry; start: number } | null = null;
  for (const entry of entries) {
    if (!isRecord(entry) || !priceMatches(entry, modelName, provider)) continue;
    const start = entry.start_time == null ? Number.NEGATIVE_INFINITY : toMillis(entry.start_time);
    if (start === undefined) continue; // an unreadable start time cannot be shown to be active
    if (runMs !== undefined && start > runMs) continue;
    if (!best || rank(entry, start, best.entry, best.start) > 0) best = { entry, start };
  }
  return best?.entry ?? null;
}

function rank(a: PriceEntry, aStart: number, b: PriceEntry, bStart: number): number {
  if (aStart !== bStart) return aStart > bStart ? 1 : -1;
  const aProvider = a.provider ? 1 : 0;
  const bProvider = b.provider ? 1 : 0;
  if (aProvider !== bProvider) return aProvider - bProvider;
  return a.match_pattern.length - b.match_pattern.length;
}

// Price maps loaded from storage may hold decimal strings.
function perToken(value: unknown): number {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) ? n : 0;
}

/**
 * Charges detail token types at their own price and the remainder at the base price. Types are
 * taken most specific (longest name) first, each capped by what is left, so tokens are never billed twice.
 */
function chargeSide(
  tokens: number | undefined,
  tokenDetails: Record<string, number> | undefined,
  basePrice: unknown,
  detailPrices: Record<string, number> | null | undefined,
): { cost: number; details: Record<string, number> } {
  const counted = Object.entries(tokenDetails ?? {});
  let remaining = Math.max(0, tokens ?? counted.reduce((sum, [, n]) => sum + n, 0));
  const prices = isRecord(detailPrices) ? detailPrices : {};
  const types = counted
    .filter(([type]) => Object.hasOwn(prices, type))
    .sort(([a], [b]) => b.length - a.length || a.localeCompare(b));
  let cost = 0;
  const details: Record<string, number> = {};
  for (const [type, n] of types) {
    const charged = Math.min(Math.max(0, n), remaining);
    details[type] = charged * perToken(prices[type]);
    cost += details[type];
    remaining -= charged;
  }
  return { cost: cost + remaining * perToken(basePrice), details };
}

/** Costs of a usage under a price entry; explicit costs in the usage win. Null when neither exists. */
export function computeCosts(usage: UsageMetadata, price: PriceEntry | null): Costs | null {
  const input = price
    ? chargeSide(usage.input_tokens, usage.input_token_details, price.prompt_cost, price.prompt_cost_details)
    : null;
  const output = price
    ? chargeSide(
        usage.output_tokens,
        usage.output_token_details,
        price.completion_cost,
        price.completion_cost_details,
      )
    : null;
  const prompt_cost = usage.input_cost ?? input?.cost ?? null;
  const completion_cost = usage.output_cost ?? output?.cost ?? null;
  const summed =
    prompt_cost === null && completion_cost === null ? null : (prompt_cost ?? 0) + (completion_cost ?? 0);
  const total_cost = usage.total_cost ?? summed;
  if (total_cost === null) return null;
  return {
    prompt_cost,
    completion_cost,
    total_cost,
    prompt_cost_details: usage.input_cost_details ?? input?.details ?? null,
    completion_cost_details: usage.output_cost_details ?? output?.details ?? null,
  };
}
