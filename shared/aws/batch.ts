import { BatchGetItemCommand, BatchWriteItemCommand, type WriteRequest } from "@aws-sdk/client-dynamodb";
import { type TableId, tableName } from "../tables.ts";
import { dynamo } from "./clients.ts";
import { fromItem, type Item, type Key, toItem } from "./ddb.ts";

// BatchWriteItem and BatchGetItem over plain JS items. What DynamoDB leaves unprocessed is sent again after a
// growing pause, in at most MAX_ATTEMPTS calls; then an error says how much was left.
const MAX_ATTEMPTS = 10;
const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(2000, 25 * 2 ** attempt)));

/**
 * Calls `send` with what is pending until it answers that nothing is left unprocessed: the retry loop of every
 * batch call. Throws after MAX_ATTEMPTS calls, naming how many `what` (items, keys) were still left.
 */
export async function untilProcessed<T>(
  op: string,
  what: string,
  pending: T[],
  send: (pending: T[]) => Promise<T[]>,
): Promise<void> {
  for (let attempt = 0; pending.length; attempt++) {
    if (attempt >= MAX_ATTEMPTS) throw new Error(`${op} left ${pending.length} ${what} unprocessed`);
    if (attempt) await backoff(attempt);
    pending = await send(pending);
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Puts and deletes in BatchWriteItem calls of 25, one after the other (`parallel`: all at once). */
export async function batchWrite(
  table: TableId,
  ops: ({ put: Item } | { delete: Item })[],
  opts: { parallel?: boolean } = {},
): Promise<void> {
  const name = tableName(table);
  const requests: WriteRequest[] = ops.map((op) =>
    "put" in op ? { PutRequest: { Item: toItem(op.put) } } : { DeleteRequest: { Key: toItem(op.delete) } },
  );
  const write = (chunk: WriteRequest[]) =>
    untilProcessed("BatchWriteItem", "items", chunk, async (pending) => {
      const out = await dynamo().send(new BatchWriteItemCommand({ RequestItems: { [name]: pending } }));
      return out.UnprocessedItems?.[name] ?? [];
    });
  if (opts.parallel) await Promise.all(chunks(requests, 25).map(write));
  else for (const chunk of chunks(requests, 25)) await write(chunk);
}

/**
 * Items by key in BatchGetItem calls of 100 (consistent reads unless `eventual`), only the `projection`
 * attributes when given (an expression, or attribute names); missing keys are absent.
 */
export async function batchGet<T extends object = Item>(
  table: TableId,
  keys: Key[],
  opts: { projection?: string | readonly string[]; eventual?: boolean } = {},
): Promise<T[]> {
  const name = tableName(table);
  const found: T[] = [];
  const names: Record<string, string> = {};
  const projection =
    typeof opts.projection === "string"
      ? opts.projection
      : opts.projection
          ?.map((a, i) => {
            names[`#p${i}`] = a;
            return `#p${i}`;
          })
          .join(", ");
  for (const chunk of chunks(keys, 100))
    await untilProcessed("BatchGetItem", "keys", chunk.map(toItem), async (Keys) => {
      const out = await dynamo().send(
        new BatchGetItemCommand({
          RequestItems: {
            [name]: {
              Keys,
              ConsistentRead: !opts.eventual,
              ...(projection ? { ProjectionExpression: projection } : {}),
              ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
            },
          },
        }),
      );
      found.push(...(out.Responses?.[name] ?? []).map((i) => fromItem<T>(i)));
      return out.UnprocessedKeys?.[name]?.Keys ?? [];
    });
  return found;
}
