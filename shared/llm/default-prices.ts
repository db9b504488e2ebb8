import type { PriceEntry } from "./prices.ts";

// Vendor list prices in USD per million tokens, converted to per token below.
const PER_MILLION = 1e-6;

// Model names arrive bare ("gpt-4o") or routed ("openai/gpt-4o", "us.anthropic.claude-...", "models/gemini-...").
const ROUTE_PREFIX = "^([\\w.-]*[./])?";
const OPENAI_SUFFIX = "(-\\d{4}-\\d{2}-\\d{2})?$";
// Dated, -latest, Vertex "@date" and Bedrock "-v1:0" variants.
const ANTHROPIC_SUFFIX = "(-v\\d+)?(-latest|-\\d{8}|@\\d{8})?(-v\\d+(:\\d+)?)?$";
// Pinned versions and previews, but never the "-lite"/"-8b" siblings, which are priced separately.
const GEMINI_SUFFIX = "(-(\\d{3}|latest|preview|exp)[\\w.-]*)?$";

interface Row {
  vendor: "openai" | "anthropic" | "google";
  model: string;
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Extra alternatives sharing the price (regex fragment). */
  aliases?: string[];
}

const ROWS: Row[] = [
  { vendor: "openai", model: "gpt-4o", input: 2.5, output: 10, cacheRead: 1.25 },
  { vendor: "openai", model: "gpt-4o-mini", input: 0.15, output: 0.6, cacheRead: 0.075 },
  { vendor: "openai", model: "gpt-4.1", input: 2, output: 8, cacheRead: 0.5 },
  { vendor: "openai", model: "gpt-4.1-mini", input: 0.4, output: 1.6, cacheRead: 0.1 },
  { vendor: "openai", model: "gpt-4.1-nano", input: 0.1, output: 0.4, cacheRead: 0.025 },
  { vendor: "openai", model: "gpt-4-turbo", input: 10, output: 30 },
  { vendor: "openai", model: "gpt-3.5-turbo", input: 0.5, output: 1.5 },
  { vendor: "openai", model: "o1", input: 15, output: 60, cacheRead: 7.5, aliases: ["o1-preview"] },
  { vendor: "openai", model: "o1-mini", input: 1.1, output: 4.4, cacheRead: 0.55 },
  { vendor: "openai", model: "o3", input: 2, output: 8, cacheRead: 0.5 },
  { vendor: "openai", model: "o3-mini", input: 1.1, output: 4.4, cacheRead: 0.55 },
  { vendor: "openai", model: "o4-mini", input: 1.1, output: 4.4, cacheRead: 0.275 },
  {
    vendor: "openai",
    model: "gpt-5",
    input: 1.25,
    output: 10,
    cacheRead: 0.125,
    aliases: ["gpt-5-chat-latest"],
  },
  { vendor: "openai", model: "gpt-5-mini", input: 0.25, output: 2, cacheRead: 0.025 },
  { vendor: "openai", model: "gpt-5-nano", input: 0.05, output: 0.4, cacheRead: 0.005 },
  { vendor: "anthropic", model: "claude-3-5-sonnet", input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  { vendor: "anthropic", model: "claude-3-7-sonnet", input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  { vendor: "anthropic", model: "claude-sonnet-4", input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  { vendor: "anthropic", model: "claude-sonnet-4-5", input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  {
    vendor: "anthropic",
    model: "claude-3-haiku",
    input: 0.25,
    output: 1.25,
    cacheRead: 0.03,
    cacheWrite: 0.3,
  },
  { vendor: "anthropic", model: "claude-3-5-haiku", input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  { vendor: "anthropic", model: "claude-haiku-4-5", input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  { vendor: "anthropic", model: "claude-3-opus", input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  {
    vendor: "anthropic",
    model: "claude-opus-4",
    input: 15,
    output: 75,
    cacheRead: 1.5,
    cacheWrite: 18.75,
    aliases: ["claude-opus-4-1"],
  },
  { vendor: "anthropic", model: "claude-opus-4-5", input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  { vendor: "google", model: "gemini-1.5-flash", input: 0.075, output: 0.3, cacheRead: 0.01875 },
  { vendor: "google", model: "gemini-1.5-flash-8b", input: 0.0375, output: 0.15, cacheRead: 0.01 },
  { vendor: "google", model: "gemini-1.5-pro", input: 1.25, output: 5, cacheRead: 0.3125 },
  { vendor: "google", model: "gemini-2.0-flash", input: 0.1, output: 0.4, cacheRead: 0.025 },
  { vendor: "google", model: "gemini-2.0-flash-lite", input: 0.075, output: 0.3 },
  { vendor: "google", model: "gemini-2.5-flash", input: 0.3, output: 2.5, cacheRead: 0.075 },
  { vendor: "google", model: "gemini-2.5-flash-lite", input: 0.1, output: 0.4, cacheRead: 0.025 },
  { vendor: "google", model: "gemini-2.5-pro", input: 1.25, output: 10, cacheRead: 0.31 },
];

const SUFFIX = { openai: OPENAI_SUFFIX, anthropic: ANTHROPIC_SUFFIX, google: GEMINI_SUFFIX };

function escapeRegex(model: string): string {
  return model.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function toEntry(row: Row): PriceEntry {
  const names = [row.model, ...(row.aliases ?? [])].map(escapeRegex).join("|");
  const prompt_cost_details: Record<string, number> = {};
  if (row.cacheRead !== undefined) prompt_cost_details.cache_read = row.cacheRead * PER_MILLION;
  if (row.cacheWrite !== undefined) prompt_cost_details.cache_creation = row.cacheWrite * PER_MILLION;
  return {
    id: `default-${row.vendor}-${row.model.replace(/\./g, "-")}`,
    name: row.model,
    match_pattern: `${ROUTE_PREFIX}(${names})${SUFFIX[row.vendor]}`,
    // Left unset so runs without ls_provider (or routed through Azure, Bedrock, Vertex) still get a price.
    provider: null,
    prompt_cost: row.input * PER_MILLION,
    completion_cost: row.output * PER_MILLION,
    prompt_cost_details,
    completion_cost_details: {},
    start_time: null,
  };
}

/** Built-in prices for common models; a workspace's own entries are meant to be listed alongside. */
export const DEFAULT_PRICE_MAP: readonly PriceEntry[] = Object.freeze(ROWS.map(toEntry));
