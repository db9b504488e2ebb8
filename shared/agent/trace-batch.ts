import { logger } from "../log.ts";
import { ingestBatch } from "../runs/ingest.ts";
import type { RunBody } from "./trace-format.ts";

// The writes of one agent run's trace, batched: run creates and ends are collected and ingested together
// (the same ingestion /runs/batch uses) when a short timer fires, when many are waiting, and at the end. A
// run that starts and ends between two flushes is one complete post, with no patch. Flushes run one at a
// time, so a run's post always lands before its patches. A failed ingestion is retried for ~15 s; failures
// are logged, never thrown.
export interface TraceBatchOptions {
  flushMs: number;
  maxQueued?: number;
  /** The ingestion; the platform's own by default. */
  ingest?: typeof ingestBatch;
  /** Waits before each retry of a failed ingestion (then the batch is given up, with a log line). */
  retryDelaysMs?: readonly number[];
}

/** ~15 s in all: a platform restarting or DynamoDB throttling for a moment does not lose a trace. */
const RETRY_DELAYS_MS = [250, 1000, 2000, 4000, 8000] as const;

// Where traces go: the platform's ingestion in a platform process; a runtime sends them to the platform.
let defaultIngest: typeof ingestBatch = ingestBatch;
export function sendTracesTo(ingest: typeof ingestBatch): void {
  defaultIngest = ingest;
}

export class TraceBatch {
  private posts = new Map<string, RunBody>();
  private patches = new Map<string, RunBody>();
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly ingest: typeof ingestBatch;

  constructor(
    private readonly tenant: string,
    private readonly opts: TraceBatchOptions,
  ) {
    this.ingest = opts.ingest ?? defaultIngest;
  }

  create(body: RunBody & { id: string }): void {
    this.posts.set(body.id, { ...this.posts.get(body.id), ...body });
    this.schedule();
  }

  update(id: string, body: RunBody): void {
    const post = this.posts.get(id);
    if (post) this.posts.set(id, { ...post, ...body });
    else this.patches.set(id, { ...this.patches.get(id), ...body });
    this.schedule();
  }

  get queued(): number {
    return this.posts.size + this.patches.size;
  }

  /** Ingests everything queued so far; resolves when it (and every earlier flush) is done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.queued) return this.chain;
    const posts = [...this.posts.values()];
    const patches = [...this.patches].map(([id, body]) => ({ id, body }));
    this.posts.clear();
    this.patches.clear();
    this.chain = this.chain.then(() => this.send(posts, patches));
    return this.chain;
  }

  private schedule() {
    if (this.queued >= (this.opts.maxQueued ?? 100)) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.opts.flushMs);
      this.timer.unref?.();
    }
  }

  // Ingestion is idempotent on run ids, so a failed batch is simply sent again, after a growing wait.
  private async send(posts: RunBody[], patches: { id: string; body: RunBody }[]): Promise<void> {
    const delays = this.opts.retryDelaysMs ?? RETRY_DELAYS_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await this.ingest(this.tenant, posts, patches);
        if (r.errors.length)
          logger.warn("agent trace: runs rejected by ingestion", {
            rejected: r.errors.length,
            errors: r.errors.slice(0, 5),
          });
        return;
      } catch (err) {
        if (attempt >= delays.length) {
          logger.error("agent trace: ingestion failed, the batch is given up", {
            runs: posts.length + patches.length,
            attempts: attempt + 1,
            error: err,
          });
          return;
        }
        await new Promise((r) => setTimeout(r, delays[attempt]));
      }
    }
  }
}
