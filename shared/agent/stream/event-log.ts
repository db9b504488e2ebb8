import { batchWrite } from "../../aws/batch.ts";
import { queryAll, queryPage } from "../../aws/ddb.ts";
import { groupPut } from "../../aws/group-write.ts";
import { logger } from "../../log.ts";
import {
  agentKeys,
  type EventChunkRecord,
  type EventFrameRecord,
  type RunKwargs,
} from "../../records/agent.ts";
import type { Frame } from "./broker.ts";

// The durable log of a run's stream frames (records and keys: shared/records/agent.ts), so a join-stream with
// Last-Event-ID resumes from any process, also after the in-process broker forgot the run. Frames are written
// in chunks off the run's hot path: one item per flush holding its frames (`frames`, JSON), SK the zero-padded
// seq of its last frame, so `SK > after` finds every chunk with a frame after `after`. (Items of one frame,
// with `event` and `data`, are read too.) At its end a run `take`s the frames not yet written and stores them
// in the transaction that writes its final status.
// A run created with `stream_resumable: false` keeps no frames for later: they are delivered live only (as the
// reference server's non-resumable runs), so a join after the fact or with Last-Event-ID replays nothing.
const T = "main" as const;
const TTL_S = 7 * 24 * 3600;
/** A frame beyond this many UTF-8 bytes (as stored) is kept as a marker. */
const MAX_FRAME_BYTES = 300_000;
/** A chunk's frames in UTF-8 bytes: its item stays well inside DynamoDB's 400 KB. */
const MAX_CHUNK_BYTES = 350_000;
const TRUNCATED = JSON.stringify({ truncated: true });
/** Until a non-resumable run's log is gone, the frames a stream elsewhere still tails (a backstop: DROP_AFTER_MS). */
const LIVE_TTL_S = 3600;
/** A non-resumable run's log outlives its end this long: a stream tailing it elsewhere reads its last frames. */
const DROP_AFTER_MS = 2_000;
const pk = agentKeys.eventsPk;

/** Are a run's frames kept for a later join (Last-Event-ID)? Unless it was created with stream_resumable: false. */
export const storesEvents = (run: { kwargs?: Pick<RunKwargs, "stream_resumable"> }): boolean =>
  run.kwargs?.stream_resumable !== false;
const sk = agentKeys.eventSk;

interface Stored {
  seq: number;
  event: string;
  /** The frame's data as JSON. */
  data: string;
}

/** A frame as stored, with its size in a chunk's `frames` (UTF-8 bytes of its JSON and a separator). */
export interface SizedFrame {
  frame: Stored;
  bytes: number;
}

/** A frame ready for a chunk; one too big for a chunk keeps its seq and event, its data a marker. */
export function sizeFrame(f: Frame): SizedFrame {
  const frame: Stored = { seq: f.seq, event: f.event, data: JSON.stringify(f.data ?? null) };
  let bytes = Buffer.byteLength(JSON.stringify(frame)) + 1;
  if (bytes > MAX_FRAME_BYTES) {
    frame.data = TRUNCATED;
    bytes = Buffer.byteLength(JSON.stringify(frame)) + 1;
  }
  return { frame, bytes };
}

/** Frames cut into chunks of at most `maxBytes` (UTF-8, as stored), in order. */
export function chunkFrames(frames: SizedFrame[], maxBytes = MAX_CHUNK_BYTES): Stored[][] {
  const out: Stored[][] = [];
  let chunk: Stored[] = [];
  let size = 2;
  for (const { frame, bytes } of frames) {
    if (chunk.length && size + bytes > maxBytes) {
      out.push(chunk);
      chunk = [];
      size = 2;
    }
    chunk.push(frame);
    size += bytes;
  }
  if (chunk.length) out.push(chunk);
  return out;
}

export class EventLog {
  private pending: SizedFrame[] = [];
  /** Chunks a flush could not store: the next flush (or `take`) carries them, so nothing is lost or stuck. */
  private unstored: EventChunkRecord[] = [];
  /** The flushes in order; never rejected, so one failed flush does not fail every later one. */
  private writing: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly scope: string,
    private readonly runId: string,
    private readonly write: (items: EventChunkRecord[]) => Promise<void> = (items) => groupPut(T, items),
    /** How long its chunks live (a non-resumable run's only while streams elsewhere may still tail them). */
    private readonly ttlS = TTL_S,
  ) {}

  add(f: Frame): void {
    this.pending.push(sizeFrame(f));
    this.timer ??= setTimeout(
      () =>
        void this.flush().catch((err) =>
          logger.warn("run event log: a flush failed, its frames go with the next", {
            run_id: this.runId,
            error: err,
          }),
        ),
      25,
    );
  }

  /** Writes everything added so far (and what an earlier flush could not). */
  flush(): Promise<void> {
    const fresh = this.drain();
    const done = this.writing.then(async () => {
      const items = [...this.unstored.splice(0), ...fresh];
      try {
        await this.write(items);
      } catch (err) {
        this.unstored.unshift(...items);
        throw err;
      }
    });
    this.writing = done.catch(() => {});
    return done;
  }

  /**
   * Hands over what is not written yet, as items, once earlier writes are done: the caller stores them in
   * its own write (the run's final transaction), so a short run's frames cost no request of their own.
   */
  async take(): Promise<EventChunkRecord[]> {
    const items = this.drain();
    await this.writing;
    return [...this.unstored.splice(0), ...items];
  }

  /** The frames added so far, as chunk items, leaving none pending (and no flush timer). */
  private drain(): EventChunkRecord[] {
    clearTimeout(this.timer);
    this.timer = undefined;
    const expires = Math.floor(Date.now() / 1000) + this.ttlS;
    const items = chunkFrames(this.pending).map((chunk) => ({
      PK: pk(this.scope, this.runId),
      SK: sk(chunk[chunk.length - 1].seq),
      frames: JSON.stringify(chunk),
      expires_at: expires,
    }));
    this.pending = [];
    return items;
  }
}

/** The log of a run whose frames are tailed live elsewhere but not kept (DROP_AFTER_MS before it goes). */
export const liveOnlyLog = (scope: string, runId: string) =>
  new EventLog(scope, runId, (items) => groupPut(T, items), LIVE_TTL_S);

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

/** Drops a non-resumable run's log once streams tailing it elsewhere have read its last frames (TTL: backstop). */
export async function dropEventLog(scope: string, runId: string, afterMs = DROP_AFTER_MS): Promise<void> {
  await new Promise((r) => setTimeout(r, afterMs));
  await deleteEventLog(scope, runId).catch((err) =>
    logger.warn("run event log: a non-resumable run's frames stay until their TTL", {
      run_id: runId,
      error: err,
    }),
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
