import {
  type AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  type WriteRequest,
} from "@aws-sdk/client-dynamodb";
import { type TableId, tableName } from "../tables.ts";
import { dynamo } from "./clients.ts";
import { fromItem, type Item, toItem } from "./ddb.ts";

// BatchWriteItem and BatchGetItem over plain JS items: every unprocessed item is retried.
const MAX_ATTEMPTS = 10;
const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(2000, 25 * 2 ** attempt)));

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Puts and deletes in BatchWriteItem calls of 25, retrying UnprocessedItems until none are left. */
export async function batchWrite(table: TableId, ops: ({ put: Item } | { delete: Item })[]): Promise<void> {
  const name = tableName(table);
  const requests: WriteRequest[] = ops.map((op) =>
    "put" in op ? { PutRequest: { Item: toItem(op.put) } } : { DeleteRequest: { Key: toItem(op.delete) } },
  );
  for (const chunk of chunks(requests, 25)) {
    let pending = chunk;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchWriteItem left ${pending.length} items unprocessed`);
      if (attempt) await backoff(attempt);
      const out = await dynamo().send(new BatchWriteItemCommand({ RequestItems: { [name]: pending } }));
      pending = out.UnprocessedItems?.[name] ?? [];
    }
  }
}

/** Items by key in BatchGetItem calls of 100 (consistent reads), retrying UnprocessedKeys; missing keys are absent. */
export async function batchGet(table: TableId, keys: Item[]): Promise<Item[]> {
  const name = tableName(table);
  const found: Item[] = [];
  for (const chunk of chunks(keys, 100)) {
    let pending: Record<string, AttributeValue>[] = chunk.map(toItem);
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed`);
      if (attempt) await backoff(attempt);
      const out = await dynamo().send(
        new BatchGetItemCommand({ RequestItems: { [name]: { Keys: pending, ConsistentRead: true } } }),
      );
      found.push(...(out.Responses?.[name] ?? []).map(fromItem));
      pending = out.UnprocessedKeys?.[name]?.Keys ?? [];
    }
  }
  return found;
}
