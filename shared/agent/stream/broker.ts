import { EventEmitter } from "node:events";

// The in-process run broker: every frame a run's worker produces is pushed here (and to the durable event log);
// streams replay a run's buffer and then follow it live, and waiters are woken the moment the run ends —
// no polling. A channel outlives its run by a minute for late joiners; after that the durable log answers.
export interface Frame {
  seq: number;
  event: string;
  data: unknown;
}

export interface RunOutcome {
  /** Final run status, or `deleted` for a rolled-back run. */
  status: string;
  values?: unknown;
  error?: { error: string; message: string };
}

const KEEP_MS = 60_000;

export class RunChannel {
  readonly frames: Frame[] = [];
  outcome?: RunOutcome;
  /** Frames numbered before this channel (a retried run's earlier attempts, in the durable log). */
  private base = 0;
  /** The last frame number before this channel's first: earlier ones are in the durable log only. */
  get numberedAfter(): number {
    return this.base;
  }
  /** The number of the last frame so far (a join of a non-resumable run follows from here). */
  get lastSeq(): number {
    return this.base + this.frames.length;
  }
  private readonly bus = new EventEmitter();
  private readonly ended: Promise<RunOutcome>;
  private resolveEnd!: (o: RunOutcome) => void;

  constructor(readonly runId: string) {
    this.bus.setMaxListeners(0);
    this.ended = new Promise((r) => {
      this.resolveEnd = r;
    });
  }

  /** Continues the numbering after `seq` (only before the first frame). */
  startAfter(seq: number): void {
    if (!this.frames.length) this.base = seq;
  }

  push(event: string, data: unknown): Frame {
    const f = { seq: this.base + this.frames.length + 1, event, data };
    this.frames.push(f);
    this.bus.emit("frame", f);
    return f;
  }

  end(outcome: RunOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.resolveEnd(outcome);
    this.bus.emit("end");
    setTimeout(() => {
      if (channels.get(this.runId) === this) channels.delete(this.runId);
    }, KEEP_MS).unref();
  }

  wait(): Promise<RunOutcome> {
    return this.ended;
  }

  /** The frames after `afterSeq`, then live ones until the run ends or `signal` aborts. */
  async *follow(afterSeq: number, signal?: AbortSignal): AsyncGenerator<Frame> {
    let next = Math.max(afterSeq, this.base) + 1;
    let wake: (() => void) | undefined;
    const poke = () => wake?.();
    this.bus.on("frame", poke);
    this.bus.on("end", poke);
    signal?.addEventListener("abort", poke);
    try {
      for (;;) {
        while (next <= this.base + this.frames.length) yield this.frames[next++ - this.base - 1];
        if (this.outcome || signal?.aborted) return;
        await new Promise<void>((r) => {
          wake = r;
        });
        wake = undefined;
      }
    } finally {
      this.bus.off("frame", poke);
      this.bus.off("end", poke);
      signal?.removeEventListener("abort", poke);
    }
  }
}

const channels = new Map<string, RunChannel>();

export function openChannel(runId: string): RunChannel {
  let c = channels.get(runId);
  if (!c) {
    c = new RunChannel(runId);
    channels.set(runId, c);
  }
  return c;
}

export const findChannel = (runId: string): RunChannel | undefined => channels.get(runId);

/** Cancellation of runs executing in this process: the AbortController each worker passes to graph.stream. */
export const controllers = new Map<string, AbortController>();
