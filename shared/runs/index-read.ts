import { batchGet } from "../aws/batch.ts";

// The runs table's indexes hold a run's keys and a few small attributes, not the run (shared/tables.ts): every
// write of a run is billed again in each index it lands in, at the size of what the index holds of it, and an
// update that changes nothing an index holds writes nothing there. A reader that needs more of the item than
// an index holds reads it from the table here: an eventually consistent BatchGetItem costs per KB what reading
// the same item from an index did (both are eventually consistent), plus one request per 100 items.

/** An entry read from one of the runs table's indexes: the table's key, at least. */
export interface IndexEntry {
  PK: string;
  SK: string;
}

/**
 * The table's items of `entries`, in their order (undefined for one gone meanwhile: TTL or a purge deleted it),
 * whole or only the `attributes` named.
 */
export async function itemsOf<T extends object>(
  entries: readonly IndexEntry[],
  attributes?: readonly string[],
): Promise<(T | undefined)[]> {
  if (!entries.length) return [];
  const keyOf = (i: IndexEntry) => `${i.PK}\n${i.SK}`;
  const unique = [...new Map(entries.map((e) => [keyOf(e), { PK: e.PK, SK: e.SK }])).values()];
  // The keys are read too: the items are matched back to their entries by them.
  const projection = attributes && [...new Set([...attributes, "PK", "SK"])];
  const found = await batchGet<T & IndexEntry>("runs", unique, { projection, eventual: true });
  const byKey = new Map(found.map((i) => [keyOf(i), i]));
  return entries.map((e) => byKey.get(keyOf(e)));
}

/** The table's items of `entries` that are still there, in their order. */
export async function presentItems<T extends object>(
  entries: readonly IndexEntry[],
  attributes?: readonly string[],
): Promise<T[]> {
  return (await itemsOf<T>(entries, attributes)).filter((i): i is Awaited<T> => i !== undefined);
}
