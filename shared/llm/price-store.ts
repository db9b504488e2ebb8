import { randomUUID } from "node:crypto";
import { z } from "zod";
import { batchWrite } from "../aws/batch.ts";
import { isConditionFailure, type Key, queryAll } from "../aws/ddb.ts";
import { NotFound, validationError } from "../errors.ts";
import {
  PRICE_MAP_SEEDED,
  type PriceMapSeededRecord,
  type PriceRecord,
  priceMapSeeded,
  prices,
  pricesPk,
} from "../records/prices.ts";
import { regexProblem } from "../safe-regex.ts";
import { canonicalTime, isoNow } from "../time.ts";
import { DEFAULT_PRICE_MAP } from "./default-prices.ts";
import type { PriceEntry } from "./prices.ts";

// A workspace's model price map. Each tenant starts from the built-in defaults, copied in on first read,
// and then owns them: edits and deletions of default entries stick. Records: shared/records/prices.ts.
const cost = z.union([
  z.number().finite().nonnegative(),
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?([eE][-+]?\d+)?$/, "Input should be a valid decimal")
    .transform(Number)
    // "1e400" is a decimal JavaScript reads as Infinity, which nothing can store.
    .pipe(z.number().finite()),
]);
const details = z.record(z.string(), cost).nullish();

/** Body of POST and PUT; `match_path` (LangSmith's field path) is accepted and ignored. */
export const PriceInput = z.looseObject({
  name: z.string().min(1).max(512),
  match_pattern: z
    .string()
    .min(1)
    .superRefine((pattern, ctx) => {
      const problem = regexProblem(pattern, "match_pattern");
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  match_path: z.unknown().optional(),
  provider: z.string().nullish(),
  prompt_cost: cost,
  completion_cost: cost,
  prompt_cost_details: details,
  completion_cost_details: details,
  start_time: z
    .string()
    .refine((s) => canonicalTime(s) !== undefined, "Input should be a valid datetime")
    .nullish(),
});
export type PriceInput = z.output<typeof PriceInput>;

export const StoredPrice = z.object({
  id: z.string(),
  name: z.string(),
  match_pattern: z.string(),
  provider: z.string().nullable(),
  prompt_cost: z.number(),
  completion_cost: z.number(),
  prompt_cost_details: z.record(z.string(), z.number()).nullable(),
  completion_cost_details: z.record(z.string(), z.number()).nullable(),
  start_time: z.string().nullable(),
  tenant_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type StoredPrice = z.output<typeof StoredPrice>;

const CACHE_MS = 5_000;
const cache = new Map<string, { entries: StoredPrice[]; until: number }>();
// Tenants known to hold their defaults already: a warm instance skips the marker read.
const seeded = new Set<string>();

/** The entry of a stored record (its fields only: not the key attributes read with it). */
function toPrice(item: PriceRecord): StoredPrice {
  return {
    id: item.id,
    name: item.name,
    match_pattern: item.match_pattern,
    provider: item.provider,
    prompt_cost: item.prompt_cost,
    completion_cost: item.completion_cost,
    prompt_cost_details: item.prompt_cost_details,
    completion_cost_details: item.completion_cost_details,
    start_time: item.start_time,
    tenant_id: item.tenant_id,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

// The defaults are computed as price × 1e-6; 15 significant digits drop the float noise (2.4999…98e-6).
const tidy = (n: unknown) => Number(Number(n).toPrecision(15));
const tidyAll = (m: Record<string, number> | null | undefined) =>
  m ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, tidy(v)])) : null;

/** The stored fields of a body; throws a 422 for a pattern refused by the schema (for callers without it). */
function fields(body: PriceInput | PriceEntry) {
  const problem = regexProblem(body.match_pattern, "match_pattern");
  if (problem) throw validationError(["body", "match_pattern"], problem);
  return {
    name: body.name,
    match_pattern: body.match_pattern,
    provider: body.provider ?? null,
    prompt_cost: tidy(body.prompt_cost),
    completion_cost: tidy(body.completion_cost),
    prompt_cost_details: tidyAll(body.prompt_cost_details),
    completion_cost_details: tidyAll(body.completion_cost_details),
    start_time: body.start_time ? (canonicalTime(body.start_time) ?? null) : null,
  };
}

async function seed(tenant: string): Promise<void> {
  if (seeded.has(tenant)) return;
  if (await priceMapSeeded.get(tenant)) {
    seeded.add(tenant);
    return;
  }
  const now = isoNow();
  await batchWrite(
    "main",
    DEFAULT_PRICE_MAP.map((entry) => ({
      put: prices.item({
        id: entry.id,
        ...fields(entry),
        tenant_id: tenant,
        created_at: now,
        updated_at: now,
      }),
    })),
  );
  // Concurrent seeders write the same ids, so losing this race changes nothing.
  await priceMapSeeded.create(tenant, { created_at: now });
  seeded.add(tenant);
}

export async function listPrices(tenant: string): Promise<StoredPrice[]> {
  await seed(tenant);
  // The partition holds the seeded marker beside the entries.
  const items = await queryAll<(PriceRecord | PriceMapSeededRecord) & Key>("main", {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": pricesPk(tenant) },
    ConsistentRead: true,
  });
  const entries = items
    .filter((i): i is PriceRecord & Key => i.SK !== PRICE_MAP_SEEDED)
    .map(toPrice)
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  if (cache.size > 10_000) cache.clear();
  cache.set(tenant, { entries, until: Date.now() + CACHE_MS });
  return entries;
}

export async function createPrice(tenant: string, body: PriceInput): Promise<StoredPrice> {
  await seed(tenant); // so a first write is not followed by the defaults appearing on their own
  const now = isoNow();
  const id = randomUUID();
  const price: PriceRecord = { id, ...fields(body), tenant_id: tenant, created_at: now, updated_at: now };
  await prices.put(price);
  cache.delete(tenant);
  return price;
}

export async function updatePrice(tenant: string, id: string, body: PriceInput): Promise<StoredPrice> {
  await seed(tenant);
  const current = id === PRICE_MAP_SEEDED ? undefined : await prices.get({ tenant, id });
  if (!current) throw new NotFound("Price entry not found");
  const price = { ...toPrice(current), ...fields(body), updated_at: isoNow() };
  try {
    await prices.put(price, { ConditionExpression: "attribute_exists(PK)" });
  } catch (err) {
    if (isConditionFailure(err)) throw new NotFound("Price entry not found");
    throw err;
  }
  cache.delete(tenant);
  return price;
}

export async function deletePrice(tenant: string, id: string): Promise<void> {
  await seed(tenant);
  if (id === PRICE_MAP_SEEDED || !(await prices.get({ tenant, id })))
    throw new NotFound("Price entry not found");
  await prices.delete({ tenant, id });
  cache.delete(tenant);
}

/** The entries ingestion prices runs with; a few seconds stale at most. */
export async function priceEntriesFor(tenant: string): Promise<PriceEntry[]> {
  const hit = cache.get(tenant);
  if (hit && hit.until > Date.now()) return hit.entries;
  return listPrices(tenant);
}
