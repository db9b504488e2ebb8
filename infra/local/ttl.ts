import { DeleteItemCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import type { TaskFunction } from "../../functions/task-manifest.ts";
import { dynamo } from "../../shared/aws/clients.ts";
import { isConditionFailure } from "../../shared/aws/ddb.ts";
import { forEachLimit } from "../../shared/concurrency.ts";
import { config } from "../../shared/config.ts";
import { logger } from "../../shared/log.ts";
import { TTL_IDENTITY, ttlDeletedKey } from "../../shared/retention/ttl-stream.ts";
import { TABLES, type TableDef, type TableId, tableName } from "../../shared/tables.ts";

// DynamoDB TTL for the tables a task consumes TTL deletes of (the runs table), locally. DynamoDB Local enforces
// TTL itself, but a consumer would then have to poll its stream; so on those tables DynamoDB Local's TTL is left
// off (infra/local/dynamodb.ts) and, every interval, this scans for expired items (keys only), deletes each
// unless its expiry moved meanwhile, and invokes the consumer with the stream records AWS would deliver it:
// REMOVE by the TTL service, keys only, the same filter. A scan reads every item (~0.7 ms each in DynamoDB Local:
// a 150k-run table takes minutes), so timer sweeps are paced to a tenth of DynamoDB Local's time, in small pages;
// AWS itself takes up to two days. A sweep invoked (LocalTtlSweep) runs at full speed.

/** The function name a local InvokeCommand uses to run a sweep now (tests), instead of waiting for the timer. */
export const LOCAL_TTL_SWEEP = "LocalTtlSweep";
/** Records per consumer invocation (a stream event source's default batch size). */
const BATCH = 100;
/** Deliveries of a failed batch before its records are given up on (logged by key). */
const ATTEMPTS = 5;
const CONCURRENCY = 8;
/** A paced sweep waits this many times as long as its last page took before reading the next one. */
const PACE = 9;
/** Items a paced sweep reads per page (a short request, so others' requests wait little behind it). */
const PACED_PAGE = 200;
const FIVE_YEARS_SECONDS = 5 * 365 * 86_400;

type Invoke = (task: string, event: unknown) => Promise<{ body: unknown; error?: string }>;
type StreamRecord = Record<string, unknown>;
interface Pending {
  task: string;
  records: StreamRecord[];
  attempts: number;
}

export interface SweepResult {
  deleted: number;
  delivered: number;
}

/** The tables whose TTL this emulates (those a task consumes TTL deletes of); DynamoDB Local does the others'. */
export function ttlEmulatedTables(tasks: TaskFunction[]): Set<TableId> {
  return new Set(tasks.flatMap((t) => (t.ttlDeletes ? [t.ttlDeletes.table] : [])));
}

export class LocalTtl {
  private timer?: NodeJS.Timeout;
  private running?: Promise<SweepResult>;
  /** Set by an invoked sweep: a paced one in progress stops pausing between pages. */
  private hurry = false;
  private stopped = false;
  private sequence = 0;
  private pending: Pending[] = [];
  private readonly consumers: (TaskFunction & { ttlDeletes: NonNullable<TaskFunction["ttlDeletes"]> })[];

  constructor(
    tasks: TaskFunction[],
    private readonly invoke: Invoke,
    /** 0 or less: no timer (sweeps only when invoked). */
    private readonly intervalMs: number,
    /** The time in seconds an item's expiry is compared with (a test's own sweep runs ahead of the cloud's). */
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {
    this.consumers = tasks.filter((t): t is (typeof this.consumers)[number] => !!t.ttlDeletes);
  }

  /** Paced sweeps, each `intervalMs` after the previous one ended. */
  start() {
    if (!(this.intervalMs > 0) || !this.consumers.length || this.stopped) return;
    this.timer = setTimeout(async () => {
      await this.sweep(true).catch((error) => logger.error("local TTL sweep failed", { error }));
      this.start();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * One sweep, after the one in progress (so items expired before the call are swept by it); unless `paced`, the
   * one in progress stops pausing too.
   */
  sweep(paced = false): Promise<SweepResult> {
    if (!paced) this.hurry = true;
    const next = (this.running ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.sweepOnce(paced))
      .finally(() => {
        if (this.running === next) {
          this.running = undefined;
          this.hurry = false;
        }
      });
    this.running = next;
    return next;
  }

  private async sweepOnce(paced: boolean): Promise<SweepResult> {
    const result: SweepResult = { deleted: 0, delivered: 0 };
    // Batches an earlier sweep failed to deliver go first: their items are gone already, only the event is owed.
    const retry = this.pending;
    this.pending = [];
    for (const p of retry) result.delivered += await this.deliver(p);
    for (const id of ttlEmulatedTables(this.consumers))
      await this.sweepTable(TABLES[id] as TableDef, result, paced);
    return result;
  }

  private async sweepTable(def: TableDef, result: SweepResult, paced: boolean) {
    const table = tableName(def.id as TableId);
    const names = { "#ttl": def.ttlAttribute ?? "expires_at", "#pk": def.partitionKey, ...sk(def) };
    const keys = def.sortKey ? "#pk, #sk" : "#pk";
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const started = Date.now();
      const nowSeconds = this.nowSeconds();
      const now = { ":now": { N: String(nowSeconds) } };
      // Keys only: a run item's payload never leaves DynamoDB Local for this.
      const page = await dynamo().send(
        new ScanCommand({
          TableName: table,
          // As AWS: a number in seconds, not more than five years in the past (older ones are never deleted).
          FilterExpression: "#ttl < :now AND #ttl > :floor",
          ProjectionExpression: keys,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ...now, ":floor": { N: String(nowSeconds - FIVE_YEARS_SECONDS) } },
          ExclusiveStartKey: ExclusiveStartKey as never,
          Limit: paced && !this.hurry ? PACED_PAGE : undefined,
        }),
      );
      const items = page.Items ?? [];
      const deleted = new Set<Record<string, unknown>>();
      await forEachLimit(items, CONCURRENCY, async (Key) => {
        try {
          // Conditional, as TTL is: an item whose expiry was extended since the scan stays.
          await dynamo().send(
            new DeleteItemCommand({
              TableName: table,
              Key,
              ConditionExpression: "#ttl < :now",
              ExpressionAttributeNames: { "#ttl": names["#ttl"] },
              ExpressionAttributeValues: now,
            }),
          );
        } catch (error) {
          // Still there (expiry extended), or left for the next sweep: the page's other deletes are delivered.
          if (!isConditionFailure(error)) logger.warn("local TTL: delete failed", { table, error });
          return;
        }
        result.deleted++;
        deleted.add(Key);
      });
      // The page's deletes as one stream's records, in the scan's order (a partition's items by sort key) whatever
      // order the concurrent deletes ended in, so a batch's records and their sequence numbers are the same each time.
      const records: StreamRecord[] = items
        .filter((Key) => deleted.has(Key))
        .map((Key) => this.removeRecord(table, Key as Record<string, unknown>));
      for (const c of this.consumers.filter((x) => x.ttlDeletes.table === def.id)) {
        const mine = records.filter((r) => ttlDeletedKey(r, c.ttlDeletes) !== undefined);
        for (let i = 0; i < mine.length; i += BATCH)
          result.delivered += await this.deliver({
            task: c.name,
            records: mine.slice(i, i + BATCH),
            attempts: 0,
          });
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
      if (this.stopped) return;
      if (paced && !this.hurry && ExclusiveStartKey)
        await new Promise((r) => setTimeout(r, (Date.now() - started) * PACE).unref());
    } while (ExclusiveStartKey);
  }

  /** A DynamoDB Streams record as TTL's delete of `Keys` writes it to a KEYS_ONLY stream. */
  private removeRecord(table: string, Keys: Record<string, unknown>): StreamRecord {
    const seq = String(++this.sequence).padStart(21, "0");
    return {
      eventID: `local-ttl-${seq}`,
      eventName: "REMOVE",
      eventVersion: "1.1",
      eventSource: "aws:dynamodb",
      awsRegion: config.region,
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
        Keys,
        SequenceNumber: seq,
        SizeBytes: 0,
        StreamViewType: "KEYS_ONLY",
      },
      userIdentity: { ...TTL_IDENTITY },
      eventSourceARN: `arn:aws:dynamodb:us-east-1:000000000000:table/${table}/stream/local`,
    };
  }

  /** Invokes the consumer; what it did not process is kept for the next sweep. Returns the records processed. */
  private async deliver(p: Pending): Promise<number> {
    const out = await this.invoke(p.task, { Records: p.records }).catch((error) => ({
      body: undefined,
      error: String((error as Error)?.message ?? error),
    }));
    const failures = (out.body as { batchItemFailures?: { itemIdentifier?: string }[] } | null)
      ?.batchItemFailures;
    const from = out.error
      ? 0
      : failures?.length
        ? p.records.findIndex(
            (r) => (r.dynamodb as { SequenceNumber?: string }).SequenceNumber === failures[0].itemIdentifier,
          )
        : -1;
    if (from < 0) return p.records.length;
    const left = { ...p, records: p.records.slice(from), attempts: p.attempts + 1 };
    if (left.attempts < ATTEMPTS) this.pending.push(left);
    else
      logger.error("local TTL: expired items' event given up", {
        function: p.task,
        keys: left.records.map((r) => (r.dynamodb as { Keys: unknown }).Keys),
      });
    return from;
  }
}

const sk = (def: TableDef): Record<string, string> => (def.sortKey ? { "#sk": def.sortKey } : {});
