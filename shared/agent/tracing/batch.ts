import { config } from "../../config.ts";
import { logger } from "../../log.ts";
import type { ingestBatch } from "../../runs/ingest.ts";
import type { RunBody } from "./format.ts";

// The writes of one agent run's trace, batched: run creates and ends are collected and ingested together
// (the same ingestion /runs/batch uses) when a short timer fires, when many are waiting, and at the end. A
// run that starts and ends between two flushes is one complete post, with no patch; the timer's flush also
// holds back the create of a run still going that was queued less than `flushMs` ago (a later flush takes it,
// ended or not: within two timer periods), so a run shorter than `flushMs` is one post whenever it started (a
// patch costs the ingestion three writes more). Flushes run one at a
// time, so a run's post always lands before its patches. A flush is cut into ingestion calls of at most
// `maxBytes` of JSON (a request's limit is about twice that), and a run bigger than that alone has its largest
// fields replaced by a note saying so. A failed ingestion is retried for ~15 s; failures are logged, never thrown.
export interface TraceBatchOptions {
  flushMs: number;
  maxQueued?: number;
  /** The ingestion: a runtime's trace sink (context.ts RuntimeServices.traces). */
  ingest?: typeof ingestBatch;
  /** Waits before each retry of a failed ingestion (then the batch is given up, with a log line). */
  retryDelaysMs?: readonly number[];
  /** The most JSON bytes one ingestion call carries (default: the ingestion's advertised batch size). */
  maxBytes?: number;
}

type Patch = { id: string; body: RunBody };
interface Call {
  posts: RunBody[];
  patches: Patch[];
}

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
/** `{"id":,"body":}` around a patch's id and body. */
const PATCH_WRAPPING_BYTES = Buffer.byteLength('{"id":,"body":}');
/** The fields of a run that can grow without bound, in the order they give way. */
const BULKY_FIELDS = ["events", "extra", "inputs", "outputs", "error"] as const;

/**
 * A run's body within `max` JSON bytes: its largest bulky fields replaced, biggest first, by a note of their
 * size (what the trace says instead of losing the run). Bodies within the limit are returned as they are.
 */
export function fitRun(body: RunBody, max: number): RunBody {
  return fitted(body, max).body;
}

/** `fitRun` with the fitted body's JSON size (each body is serialised once to be measured). */
function fitted(body: RunBody, max: number): { body: RunBody; bytes: number } {
  let bytes = jsonBytes(body);
  if (bytes <= max) return { body, bytes };
  const out: RunBody = { ...body };
  const sizes = BULKY_FIELDS.filter((f) => out[f] !== undefined)
    .map((f) => ({ f, bytes: jsonBytes(out[f]) }))
    .sort((a, b) => b.bytes - a.bytes);
  for (const { f, bytes: fieldBytes } of sizes) {
    out[f] = {
      __truncated__: `${f} was ${fieldBytes} bytes as JSON, over the ${max} bytes a traced run may carry`,
    };
    bytes = jsonBytes(out);
    if (bytes <= max) break;
  }
  return { body: out, bytes };
}

/** Posts then patches, cut into calls of at most `max` JSON bytes each, in order; `shortened` names runs fitted. */
export function cutCalls(
  posts: RunBody[],
  patches: Patch[],
  max: number,
): { calls: Call[]; shortened: string[] } {
  const calls: Call[] = [];
  const shortened: string[] = [];
  const sized = (id: unknown, body: RunBody) => {
    const out = fitted(body, max);
    if (out.body !== body) shortened.push(String(id));
    return out;
  };
  let call: Call = { posts: [], patches: [] };
  let bytes = 0;
  const add = (bodyBytes: number, put: (c: Call) => void) => {
    if (bytes + bodyBytes > max && (call.posts.length || call.patches.length)) {
      calls.push(call);
      call = { posts: [], patches: [] };
      bytes = 0;
    }
    put(call);
    bytes += bodyBytes;
  };
  for (const post of posts) {
    const { body, bytes } = sized(post.id, post);
    add(bytes, (c) => c.posts.push(body));
  }
  for (const patch of patches) {
    const { body, bytes } = sized(patch.id, patch.body);
    // The patch's id and its wrapping ({"id":…,"body":…}) count too.
    add(bytes + jsonBytes(patch.id) + PATCH_WRAPPING_BYTES, (c) => c.patches.push({ id: patch.id, body }));
  }
  if (call.posts.length || call.patches.length) calls.push(call);
  return { calls, shortened };
}

/** ~15 s in all: a platform restarting or DynamoDB throttling for a moment does not lose a trace. */
const RETRY_DELAYS_MS = [250, 1000, 2000, 4000, 8000] as const;

export class TraceBatch {
  private posts = new Map<string, RunBody>();
  /** When the create of each queued post was queued (ms): a young create of a run still going waits. */
  private queuedAt = new Map<string, number>();
  private patches = new Map<string, RunBody>();
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly ingest: typeof ingestBatch;

  constructor(
    private readonly tenant: string,
    private readonly opts: TraceBatchOptions,
  ) {
    // No default: importing the platform's ingestion here put it, and its token tables, into every bundle that
    // reaches this module (the runtime layer, the run sweeper) whether or not it traces.
    const ingest = opts.ingest;
    if (!ingest)
      throw new Error(
        "No trace destination: runs are traced in a runtime, whose deployment carries its sink",
      );
    this.ingest = ingest;
  }

  create(body: RunBody & { id: string }): void {
    this.posts.set(body.id, { ...this.posts.get(body.id), ...body });
    if (!this.queuedAt.has(body.id)) this.queuedAt.set(body.id, Date.now());
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
    return this.flushOlder(Number.POSITIVE_INFINITY);
  }

  /**
   * Ingests what is queued but the creates of runs still going queued after `youngerThan` (ms): those stay for
   * the next flush, which the timer is set for.
   */
  private flushOlder(youngerThan: number): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.queued) return this.chain;
    const posts: RunBody[] = [];
    for (const [id, body] of this.posts) {
      if (body.end_time == null && (this.queuedAt.get(id) ?? 0) > youngerThan) continue;
      posts.push(body);
      this.posts.delete(id);
      this.queuedAt.delete(id);
    }
    const patches = [...this.patches].map(([id, body]) => ({ id, body }));
    this.patches.clear();
    if (this.posts.size) this.arm();
    if (!posts.length && !patches.length) return this.chain;
    this.chain = this.chain.then(() => this.send(posts, patches));
    return this.chain;
  }

  private schedule() {
    if (this.queued >= (this.opts.maxQueued ?? 100)) void this.flush();
    else this.arm();
  }

  private arm() {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flushOlder(Date.now() - this.opts.flushMs), this.opts.flushMs);
    this.timer.unref?.();
  }

  private async send(posts: RunBody[], patches: Patch[]): Promise<void> {
    // Within what the trace path takes of one call (the platform socket, AgentTraceIngest): half, for overshoot.
    const max =
      this.opts.maxBytes ?? Math.min(config.ingestBatchBytes, Math.floor(config.agent.traceBodyBytes / 2));
    const { calls, shortened } = cutCalls(posts, patches, max);
    if (shortened.length)
      logger.warn("agent trace: runs over the size a traced run may carry were shortened", {
        max_bytes: max,
        run_ids: shortened.slice(0, 10),
      });
    for (const call of calls) await this.sendCall(call.posts, call.patches);
  }

  // Ingestion is idempotent on run ids, so a failed call is simply sent again, after a growing wait.
  private async sendCall(posts: RunBody[], patches: Patch[]): Promise<void> {
    const delays = this.opts.retryDelaysMs ?? RETRY_DELAYS_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await this.ingest(this.tenant, posts, patches);
        if (r.errors.length)
          logger.warn("agent trace: runs rejected by ingestion", {
            rejected: r.errors.length,
            errors: r.errors.slice(0, 5),
          });
        if (r.refused?.length)
          logger.warn("agent trace: runs refused, their ids are runs of another project", {
            refused: r.refused.length,
            ids: r.refused.slice(0, 5).map((x) => x.id),
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
