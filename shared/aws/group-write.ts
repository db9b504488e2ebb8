import {
  type AttributeValue,
  BatchWriteItemCommand,
  PutItemCommand,
  type TransactWriteItem,
  type WriteRequest,
} from "@aws-sdk/client-dynamodb";
import { ItemTooLarge } from "../errors.ts";
import { type TableId, tableName } from "../tables.ts";
import { untilProcessed } from "./batch.ts";
import { dynamo } from "./clients.ts";
import { cancelCodes, isConditionFailure, type Key, toItem, transact } from "./ddb.ts";
import { DDB_LIMITS, REQUEST_OVERHEAD_BYTES } from "./limits.ts";
import { itemBytes } from "./write-units.ts";

// Group commit for the agent state's hot writes. Concurrent runs each write a few small items per step
// (checkpoint values and heads, task writes, stream frames); sent one request each, the per-request cost of
// DynamoDB (and of the SDK) dominates. Here writes from every caller in the process queue up and leave
// together: plain puts in BatchWriteItem calls (25 items, 16 MB), create-only puts (attribute_not_exists) in
// TransactWriteItems calls (100 items, 4 MB) — a call is cut by count and by bytes, and an item over DynamoDB's
// 400 KB fails alone, before it joins a call, so one caller's big item never fails another's. A lone write leaves at once (after the current I/O callbacks, so
// callers of the same moment share a call); under load at most MAX_IN_FLIGHT calls per lane are out, and
// whatever arrives meanwhile rides in the next one. Each caller's promise settles when all its items are
// stored, so "values first, then the checkpoint that points to them" still holds by awaiting in order.
const MAX_IN_FLIGHT = 2;

interface Waiter {
  table: string;
  /** The item, marshalled. */
  item: Record<string, AttributeValue>;
  /** `<table>\n<PK>\n<SK>`: one call never holds two writes of one key. */
  key: string;
  /** What the write adds to a call's size: the item's size and a margin for the rest of the request. */
  bytes: number;
  settle: (err: unknown, created?: boolean) => void;
  settled?: boolean;
}

function settle(w: Waiter, err: unknown, created?: boolean): void {
  if (w.settled) return;
  w.settled = true;
  w.settle(err, created);
}

/**
 * The next call's writes, in queue order: at most `maxItems`, at most `maxBytes` together, no key twice, none
 * ahead of an earlier write of its key; the rest stays queued, in order. The first write always goes (alone it fits: items were sized on enqueue).
 */
export function takeGroup<W extends { key: string; bytes: number }>(
  queue: W[],
  maxItems: number,
  maxBytes: number,
): { group: W[]; rest: W[] } {
  const group: W[] = [];
  const rest: W[] = [];
  const keys = new Set<string>();
  let bytes = 0;
  for (const w of queue) {
    const free = !keys.has(w.key);
    // A key seen once is closed for this call: a later write of it never overtakes an earlier one left queued.
    keys.add(w.key);
    if (free && group.length < maxItems && (!group.length || bytes + w.bytes <= maxBytes)) {
      bytes += w.bytes;
      group.push(w);
    } else rest.push(w);
  }
  return { group, rest };
}

class Lane {
  private queue: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly maxItems: number,
    private readonly maxBytes: number,
    private readonly send: (batch: Waiter[]) => Promise<void>,
  ) {}

  add(ws: Waiter[]): void {
    if (!ws.length) return;
    this.queue.push(...ws);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
  }

  private pump(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length) {
      const { group: batch, rest } = takeGroup(this.queue, this.maxItems, this.maxBytes);
      this.queue = rest;
      this.inFlight++;
      this.send(batch)
        .catch((err) => {
          for (const w of batch) settle(w, err);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}

/** DynamoDB refused a call of several writes as a whole (a size it counts otherwise): each goes alone then. */
const refusedGroup = (batch: Waiter[], err: unknown) =>
  batch.length > 1 && (err as { name?: string })?.name === "ValidationException";

const keyOf = (table: string, item: Key) => `${table}\n${item.PK}\n${item.SK}`;

const putAll = (batch: Waiter[]) =>
  untilProcessed("BatchWriteItem", "items", batch, async (pending) => {
    const byTable: Record<string, WriteRequest[]> = {};
    for (const w of pending) {
      byTable[w.table] ??= [];
      byTable[w.table].push({ PutRequest: { Item: w.item } });
    }
    const out = await dynamo().send(new BatchWriteItemCommand({ RequestItems: byTable }));
    const left = new Set<string>();
    for (const [table, reqs] of Object.entries(out.UnprocessedItems ?? {}))
      for (const r of reqs)
        if (r.PutRequest?.Item) left.add(`${table}\n${r.PutRequest.Item.PK?.S}\n${r.PutRequest.Item.SK?.S}`);
    for (const w of pending) if (!left.has(w.key)) settle(w, undefined, true);
    return pending.filter((w) => left.has(w.key));
  });

const puts = new Lane(DDB_LIMITS.batchWriteItems, DDB_LIMITS.batchWriteBytes, async (batch) => {
  try {
    await putAll(batch);
  } catch (err) {
    if (!refusedGroup(batch, err)) throw err;
    await Promise.all(batch.map((w) => putAll([w]).catch((e) => settle(w, e))));
  }
});

const createOnly = (w: Waiter): TransactWriteItem => ({
  Put: {
    TableName: w.table,
    Item: w.item,
    ConditionExpression: "attribute_not_exists(SK)",
  },
});

const creates = new Lane(DDB_LIMITS.transactItems, DDB_LIMITS.transactBytes, async (batch) => {
  try {
    await transact(batch.map(createOnly));
    for (const w of batch) settle(w, undefined, true);
    return;
  } catch (err) {
    if (!cancelCodes(err)?.includes("ConditionalCheckFailed") && !refusedGroup(batch, err)) throw err;
  }
  // Some item already existed (a replayed task), or DynamoDB refused the call for one item: each on its own.
  await Promise.all(
    batch.map(async (w) => {
      try {
        await dynamo().send(new PutItemCommand({ ...createOnly(w).Put!, TableName: w.table }));
        settle(w, undefined, true);
      } catch (err) {
        if (isConditionFailure(err)) settle(w, undefined, false);
        else settle(w, err);
      }
    }),
  );
});

function enqueue(lane: Lane, table: TableId, items: Key[]): Promise<boolean[]> {
  if (!items.length) return Promise.resolve([]);
  const name = tableName(table);
  return new Promise((resolve, reject) => {
    const out: boolean[] = new Array(items.length);
    let left = items.length;
    let failed = false;
    const waiters = items.map((item, i): Waiter => {
      const marshalled = toItem(item);
      return {
        table: name,
        item: marshalled,
        key: keyOf(name, item),
        bytes: itemBytes(marshalled) + REQUEST_OVERHEAD_BYTES,
        settle: (err, created) => {
          if (failed) return;
          if (err) {
            failed = true;
            reject(err);
            return;
          }
          out[i] = created ?? false;
          if (--left === 0) resolve(out);
        },
      };
    });
    // An item DynamoDB would refuse fails its caller here; the caller's other items are still written.
    const fit = waiters.filter((w) => {
      const size = w.bytes - REQUEST_OVERHEAD_BYTES;
      if (size <= DDB_LIMITS.itemBytes) return true;
      settle(w, new ItemTooLarge(w.key.replace(/\n/g, " "), size, DDB_LIMITS.itemBytes));
      return false;
    });
    lane.add(fit);
  });
}

/** Puts the items (overwriting), in calls shared with other callers; resolves once all are stored. */
export async function groupPut(table: TableId, items: Key[]): Promise<void> {
  await enqueue(puts, table, items);
}

/** Creates the items where their key is free; answers per item whether it was created (false: it existed). */
export function groupCreate(table: TableId, items: Key[]): Promise<boolean[]> {
  return enqueue(creates, table, items);
}
