import { batchWrite } from "../aws/batch.ts";
import { queryAll, queryPage } from "../aws/ddb.ts";
import { agentKeys, type EventChunkRecord, type EventFrameRecord } from "../records/agent.ts";
import type { Frame } from "./broker.ts";
import { groupPut } from "./group-write.ts";

// The durable log of a run's stream frames (records and keys: shared/records/agent.ts), so a join-stream with
// Last-Event-ID resumes from any process, also after the in-process broker forgot the run. Frames are written
// in chunks off the run's hot path: one item per flush holding its frames (`frames`, JSON), SK the zero-padded
// seq of its last frame, so `SK > after` finds every chunk with a frame after `after`. (Items of one frame,
// with `event` and `data`, are read too.) At its end a run `take`s the frames not yet written and stores them
// in the transaction that writes its final status.
const T = "main" as const;
const TTL_S = 7 * 24 * 3600;
const MAX_DATA = 300_000;
/** A chunk item stays well inside DynamoDB's 400 KB. */
const MAX_CHUNK = 350_000;
const pk = agentKeys.eventsPk;
const sk = agentKeys.eventSk;

interface Stored {
  seq: number;
  event: string;
  /** The frame's data as JSON. */
  data: string;
}

export class EventLog {
  private pending: Stored[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly scope: string,
    private readonly runId: string,
  ) {}

  add(f: Frame): void {
    let data = JSON.stringify(f.data ?? null);
    if (data.length > MAX_DATA) data = JSON.stringify({ truncated: true });
    this.pending.push({ seq: f.seq, event: f.event, data });
    this.timer ??= setTimeout(() => void this.flush().catch(() => {}), 25);
  }

  /** Writes everything added so far. */
  flush(): Promise<void> {
    const items = this.drain();
    this.writing = this.writing.then(() => groupPut(T, items));
    return this.writing;
  }

  /**
   * Hands over what is not written yet, as items, once earlier writes are done: the caller stores them in
   * its own write (the run's final transaction), so a short run's frames cost no request of their own.
   */
  async take(): Promise<EventChunkRecord[]> {
    const items = this.drain();
    await this.writing;
    return items;
  }

  /** The frames added so far, as chunk items, leaving none pending (and no flush timer). */
  private drain(): EventChunkRecord[] {
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.chunks(this.pending);
    this.pending = [];
    return items;
  }

  private chunks(frames: Stored[]): EventChunkRecord[] {
    const items: EventChunkRecord[] = [];
    let chunk: Stored[] = [];
    let size = 0;
    const close = () => {
      if (!chunk.length) return;
      items.push({
        PK: pk(this.scope, this.runId),
        SK: sk(chunk[chunk.length - 1].seq),
        frames: JSON.stringify(chunk),
        expires_at: Math.floor(Date.now() / 1000) + TTL_S,
      });
      chunk = [];
      size = 0;
    };
    for (const f of frames) {
      if (size + f.data.length > MAX_CHUNK) close();
      chunk.push(f);
      size += f.data.length + f.event.length + 32;
    }
    close();
    return items;
  }
}

export async function readEventLog(scope: string, runId: string, afterSeq = 0): Promise<Frame[]> {
  const items = await queryAll<EventChunkRecord | EventFrameRecord>(T, {
    KeyConditionExpression: "PK = :pk AND SK > :after",
    values: { ":pk": pk(scope, runId), ":after": sk(afterSeq) },
    ConsistentRead: true,
  });
  const stored: Stored[] = items.flatMap((i) =>
    typeof i.frames === "string"
      ? (JSON.parse(i.frames) as Stored[])
      : [{ seq: Number(i.SK), event: i.event, data: i.data }],
  );
  return stored
    .filter((f) => f.seq > afterSeq)
    .map((f) => ({ seq: f.seq, event: f.event, data: JSON.parse(f.data) }));
}

export async function deleteEventLog(scope: string, runId: string): Promise<void> {
  const items = await queryAll<Pick<EventChunkRecord, "PK" | "SK">>(T, {
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
  const { items } = await queryPage<Pick<EventChunkRecord, "SK">>(T, {
    KeyConditionExpression: "PK = :pk",
    values: { ":pk": pk(scope, runId) },
    ScanIndexForward: false,
    Limit: 1,
    ProjectionExpression: "SK",
    ConsistentRead: true,
  });
  return items.length ? Number(items[0].SK) : 0;
}
