import { conditionalUpdate, type Key, queryAll } from "../aws/ddb.ts";
import type { TableId } from "../tables.ts";

// Sharded index partitions. A constant index key shared by every tenant puts every write of that index on one
// partition (a GSI partition takes at most 1,000 WCU/s: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html);
// `<base>#<n>` spreads them over a fixed number of shards, and the readers query every shard.

/** The shard of an id: a string hash, so every writer of a record picks the same partition. */
export function hashShard(id: string, shards: number): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return h % shards;
}

/** A sharded partition: its shard count is fixed (changing it strands entries under the old keys). */
export interface ShardedKey {
  base: string;
  shards: number;
}

/** The partition key of `id`'s entry. */
export const shardKey = (k: ShardedKey, id: string) => `${k.base}#${hashShard(id, k.shards)}`;

/** Every shard's partition key, for the readers. */
export const shardKeys = (k: ShardedKey) => Array.from({ length: k.shards }, (_, n) => `${k.base}#${n}`);

/** Every item a query (its `:pk` set per shard) matches in every shard, the shards read at once. */
export async function queryShards<T extends object>(
  table: TableId,
  k: ShardedKey,
  input: Parameters<typeof queryAll>[1],
): Promise<T[]> {
  const per = await Promise.all(
    shardKeys(k).map((pk) => queryAll<T>(table, { ...input, values: { ...input.values, ":pk": pk } })),
  );
  return per.flat();
}

/** An index's key attributes. */
export interface IndexKeys {
  name: string;
  partitionKey: string;
  sortKey: string;
}

/**
 * Moves the entries an earlier version left in the unsharded partition `from.pk` of `from.index` to their
 * shards of `to.key` in `to.index` (the same index, or another): idempotent, each move conditional on the
 * entry being unchanged, and only for items `idOf` recognises (answering the id their shard hashes).
 */
export async function moveToShards<T extends Key>(
  table: TableId,
  from: { index: IndexKeys; pk: string },
  to: { index: IndexKeys; key: ShardedKey },
  idOf: (item: T) => string | undefined,
): Promise<number> {
  const [fp, fs] = [from.index.partitionKey, from.index.sortKey];
  const items = await queryAll<T & Record<string, string>>(table, {
    IndexName: from.index.name,
    KeyConditionExpression: "#pk = :pk",
    ExpressionAttributeNames: { "#pk": fp },
    values: { ":pk": from.pk },
  });
  let moved = 0;
  for (const item of items) {
    const id = idOf(item);
    if (id === undefined) continue;
    const other = from.index.name !== to.index.name;
    const done = await conditionalUpdate(
      table,
      { PK: item.PK, SK: item.SK },
      {
        set: { [to.index.partitionKey]: shardKey(to.key, id), [to.index.sortKey]: item[fs] },
        when: { [fp]: item[fp], [fs]: item[fs] },
        ...(other ? { remove: [fp, fs] } : {}),
      },
    );
    if (done) moved++;
  }
  return moved;
}
