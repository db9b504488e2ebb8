import { CREATE_ONLY, getItem, isConditionFailure, type Key, putItem } from "../aws/ddb.ts";
import { repository } from "../aws/repository.ts";

// A workspace's model price map (main table): the built-in defaults, copied in on first read, and then the
// workspace's own entries (edits and deletions of default entries stick).
//   price   PK T#<tenant>#PRICE  SK <id>      (a copied default keeps the default's id; others are uuids)
//   seeded  PK T#<tenant>#PRICE  SK _seeded   (the defaults were copied in)

export const pricesPk = (tenant: string) => `T#${tenant}#PRICE`;
export const PRICE_MAP_SEEDED = "_seeded";

export interface PriceRecord {
  id: string;
  tenant_id: string;
  name: string;
  /** Regex source tested against a run's model name. */
  match_pattern: string;
  provider: string | null;
  /** Per-token prices. */
  prompt_cost: number;
  completion_cost: number;
  prompt_cost_details: Record<string, number> | null;
  completion_cost_details: Record<string, number> | null;
  /** Canonical time from which the entry applies; null: it always applied. */
  start_time: string | null;
  created_at: string;
  updated_at: string;
}

export const prices = repository<PriceRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: pricesPk(tenant), SK: id }),
  keysOf: (p) => ({ PK: pricesPk(p.tenant_id), SK: p.id }),
});

/** The marker of a workspace whose defaults were copied in. */
export interface PriceMapSeededRecord {
  created_at: string;
}

const seededKey = (tenant: string): Key => ({ PK: pricesPk(tenant), SK: PRICE_MAP_SEEDED });

/** Not a `repository()`: the marker holds no field its key could be made of. */
export const priceMapSeeded = {
  get: (tenant: string, consistent = true) =>
    getItem<PriceMapSeededRecord>("main", seededKey(tenant), consistent),
  /** Writes the marker unless it exists; false when it does. */
  async create(tenant: string, r: PriceMapSeededRecord): Promise<boolean> {
    try {
      await putItem("main", { ...seededKey(tenant), ...r }, CREATE_ONLY);
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  },
};
