import {
  BatchWriteItemCommand,
  PutItemCommand,
  type TransactWriteItem,
  type WriteRequest,
} from "@aws-sdk/client-dynamodb";
import { untilProcessed } from "../aws/batch.ts";
import { dynamo } from "../aws/clients.ts";
import { cancelCodes, isConditionFailure, type Key, toItem, transact } from "../aws/ddb.ts";
import { type TableId, tableName } from "../tables.ts";

// Group commit for the agent state's hot writes. Concurrent runs each write a few small items per step
// (checkpoint values and heads, task writes, stream frames); sent one request each, the per-request cost of
// DynamoDB (and of the SDK) dominates. Here writes from every caller in the process queue up and leave
// together: plain puts in BatchWriteItem calls of 25, create-only puts (attribute_not_exists) in
// TransactWriteItems calls of up to 100. A lone write leaves at once (after the current I/O callbacks, so
// callers of the same moment share a call); under load at most MAX_IN_FLIGHT calls per lane are out, and
// whatever arrives meanwhile rides in the next one. Each caller's promise settles when all its items are
// stored, so "values first, then the checkpoint that points to them" still holds by awaiting in order.
const MAX_IN_FLIGHT = 2;

interface Waiter {
  table: string;
  /** An item of any record kind: only its key is read here. */
  item: Key;
  /** `<table>\n<PK>\n<SK>`: one call never holds two writes of one key. */
  key: string;
  settle: (err: unknown, created?: boolean) => void;
  settled?: boolean;
}

function settle(w: Waiter, err: unknown, created?: boolean): void {
  if (w.settled) return;
  w.settled = true;
  w.settle(err, created);
}

class Lane {
  private queue: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly max: number,
    private readonly send: (batch: Waiter[]) => Promise<void>,
  ) {}

  add(ws: Waiter[]): void {
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
      const batch: Waiter[] = [];
      const rest: Waiter[] = [];
      const keys = new Set<string>();
      for (const w of this.queue) {
        if (batch.length < this.max && !keys.has(w.key)) {
          keys.add(w.key);
          batch.push(w);
        } else rest.push(w);
      }
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

const keyOf = (table: string, item: Key) => `${table}\n${item.PK}\n${item.SK}`;

const puts = new Lane(25, (batch) =>
  untilProcessed("BatchWriteItem", "items", batch, async (pending) => {
    const byTable: Record<string, WriteRequest[]> = {};
    for (const w of pending) {
      byTable[w.table] ??= [];
      byTable[w.table].push({ PutRequest: { Item: toItem(w.item) } });
    }
    const out = await dynamo().send(new BatchWriteItemCommand({ RequestItems: byTable }));
    const left = new Set<string>();
    for (const [table, reqs] of Object.entries(out.UnprocessedItems ?? {}))
      for (const r of reqs)
        if (r.PutRequest?.Item) left.add(`${table}\n${r.PutRequest.Item.PK?.S}\n${r.PutRequest.Item.SK?.S}`);
    for (const w of pending) if (!left.has(w.key)) settle(w, undefined, true);
    return pending.filter((w) => left.has(w.key));
  }),
);

const createOnly = (w: Waiter): TransactWriteItem => ({
  Put: {
    TableName: w.table,
    Item: toItem(w.item),
    ConditionExpression: "attribute_not_exists(SK)",
  },
});

const creates = new Lane(100, async (batch) => {
  try {
    await transact(batch.map(createOnly));
    for (const w of batch) settle(w, undefined, true);
    return;
  } catch (err) {
    if (!cancelCodes(err)?.includes("ConditionalCheckFailed")) throw err;
  }
  // Some item already existed (a replayed task): settle each on its own.
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
    lane.add(
      items.map((item, i) => ({
        table: name,
        item,
        key: keyOf(name, item),
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
      })),
    );
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
