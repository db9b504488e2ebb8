import { type Item, queryPage } from "../aws/ddb.ts";
import type { Frame } from "./broker.ts";
import { batchWrite, queryAll } from "./ddb-batch.ts";
import { groupPut } from "./group-write.ts";

// The durable log of a run's stream frames (PK `AGENT#<scope>#EVENTS#<run_id>`, SK the zero-padded seq), so a
// join-stream with Last-Event-ID resumes from any process, also after the in-process broker forgot the run.
// Writes are batched off the run's hot path; `flush` is awaited before the run's final status is written.
const T = "main" as const;
const TTL_S = 7 * 24 * 3600;
const MAX_DATA = 300_000;
const pk = (scope: string, runId: string) => `AGENT#${scope}#EVENTS#${runId}`;
const sk = (seq: number) => String(seq).padStart(10, "0");

export class EventLog {
  private pending: Item[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly scope: string,
    private readonly runId: string,
  ) {}

  add(f: Frame): void {
    let data = JSON.stringify(f.data ?? null);
    if (data.length > MAX_DATA) data = JSON.stringify({ truncated: true });
    this.pending.push({
      PK: pk(this.scope, this.runId),
      SK: sk(f.seq),
      event: f.event,
      data,
      expires_at: Math.floor(Date.now() / 1000) + TTL_S,
    });
    this.timer ??= setTimeout(() => void this.flush().catch(() => {}), 25);
  }

  /** Writes everything added so far. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing.then(() => groupPut(T, batch));
    return this.writing;
  }
}

export async function readEventLog(scope: string, runId: string, afterSeq = 0): Promise<Frame[]> {
  const items = await queryAll(T, {
    KeyConditionExpression: "PK = :pk AND SK > :after",
    values: { ":pk": pk(scope, runId), ":after": sk(afterSeq) },
    ConsistentRead: true,
  });
  return items.map((i) => ({ seq: Number(i.SK), event: i.event, data: JSON.parse(i.data) }));
}

export async function deleteEventLog(scope: string, runId: string): Promise<void> {
  const items = await queryAll(T, {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": pk(scope, runId) },
    ProjectionExpression: "PK, SK",
  });
  await batchWrite(
    T,
    items.map((i) => ({ delete: { PK: i.PK, SK: i.SK } })),
  );
}

/** The highest seq in a run's durable log (0 when empty): a retried attempt numbers its frames after it. */
export async function lastEventSeq(scope: string, runId: string): Promise<number> {
  const { items } = await queryPage(T, {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": pk(scope, runId) },
    ScanIndexForward: false,
    Limit: 1,
    ProjectionExpression: "SK",
    ConsistentRead: true,
  });
  return items.length ? Number(items[0].SK) : 0;
}
