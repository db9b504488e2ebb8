import { randomBytes, randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import type { EventLoopUtilization } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { RequestStats } from "../../shared/aws/request-stats.ts";
import { config } from "../../shared/config.ts";

// The local Lambda execution environments: a function's bundle (the one deployed to AWS) runs in worker threads
// of its own, one invocation at a time per environment as in Lambda, with its environment variables, a heap as
// large as Lambda's Node.js runtime gives its memory size, and its timeout: a bundle that cannot load, a
// function that outgrows its memory or its time fails here as it would there.
const WORKER = join(dirname(fileURLToPath(import.meta.url)), "function-worker.mjs");

export interface FunctionSpec {
  /** The function's name (its log group, context.functionName). */
  name: string;
  /** Absolute path of the bundle's entry module (index.mjs). */
  entry: string;
  /** The exported handler (default "handler"). */
  handler?: string;
  memoryMb: number;
  timeoutSeconds: number;
  environment: Record<string, string>;
  /** Most execution environments at once (its reserved concurrency); further invocations wait for one. */
  maxConcurrency?: number;
  /**
   * Environments its queued invocations may keep busy at once (LOCAL_FUNCTION_ENVIRONMENTS): one arriving while
   * that many are up and none is free waits, in order of arrival, for the next to free instead of starting
   * another. Undefined: an environment per concurrent invocation, as Lambda scales.
   */
  queueBeyond?: number;
  /** Its invocations are held open (a response stream, a long-poll): never queued behind one another. */
  heldOpen?: boolean;
  /** An idle environment is shut down after this long (Lambda reclaims idle ones too). */
  idleMs?: number;
}

/** How an invocation reached the function. */
export interface InvokeOptions {
  /**
   * Made by an invocation still running (its trace header says so): never queued, since the invocation it waits
   * for could be the one holding the environment it would wait for (a function invoking itself, or its chain).
   */
  nested?: boolean;
}

/** What an invocation came to: its JSON result, a response stream's bytes, or the error Lambda would report. */
export type Invocation =
  | { kind: "result"; value: unknown }
  | { kind: "stream"; bytes: AsyncIterable<Buffer>; abort(): void }
  | { kind: "error"; errorType: string; errorMessage: string };

/**
 * Environments initialising at once, across all functions. Lambda starts each on a machine of its own; here they
 * share the laptop's cores, and sixty bundles loading at once would all finish at the end (a request's timeout
 * may pass first). Further starts wait for a slot, so the first ones answer as soon as they are loaded.
 */
const INIT_SLOTS = Math.max(2, availableParallelism() * 2);
let initsRunning = 0;
const initWaiting: (() => void)[] = [];

async function initSlot(): Promise<() => void> {
  while (initsRunning >= INIT_SLOTS) await new Promise<void>((r) => initWaiting.push(r));
  initsRunning++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    initsRunning--;
    initWaiting.shift()?.();
  };
}

/** At most this many times `queueBeyond` environments for a function whose invocations mostly wait. */
const QUEUE_STRETCH = 4;

/** How long an idle environment is kept (LOCAL_FUNCTION_IDLE_MS; the test run keeps them for its whole length). */
const defaultIdleMs = () => config.localCloud.functionIdleMs;

/** The heap Lambda's Node.js runtime allows a function of this memory size (--max-old-space-size: 90%). */
export const heapMbOf = (memoryMb: number) => Math.floor(memoryMb * 0.9);

interface Pending {
  settle(outcome: Invocation): void;
  chunk(bytes: Buffer): void;
  end(): void;
}

type Message =
  | { type: "ready" }
  | { id: string; type: "chunk"; bytes: Uint8Array }
  | { id: string; type: "end" }
  | { id: string; type: "done"; json?: string; streamed?: boolean; stats?: RequestStats }
  | { id: string; type: "error"; errorType: string; errorMessage: string; stats?: RequestStats };

/** One execution environment: a worker that has loaded the bundle (or failed to). */
class Environment {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  private pending?: { id: string; p: Pending; timer: NodeJS.Timeout };
  private exited = false;
  /** Timed out, crashed or stopped: never handed another invocation. */
  dead = false;
  /** Started ahead of invocations (provisioned concurrency): never reclaimed for being idle. */
  provisioned = false;
  /** The bundle's request counts as of its last invocation (PLATFORM_COUNT_REQUESTS). */
  stats?: RequestStats;
  /** The share of its last invocation's time its event loop was busy (0–1): how much it computes, not waits. */
  lastUtilization?: number;
  private loopAtStart?: EventLoopUtilization;
  idleTimer?: NodeJS.Timeout;

  constructor(
    private readonly spec: FunctionSpec,
    private readonly gone: (env: Environment) => void,
  ) {
    this.worker = new Worker(WORKER, {
      workerData: {
        entry: pathToFileURL(spec.entry).href,
        handler: spec.handler ?? "handler",
        functionName: spec.name,
        memoryMb: spec.memoryMb,
      },
      env: {
        ...spec.environment,
        AWS_LAMBDA_FUNCTION_NAME: spec.name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: `${spec.memoryMb}`,
      },
      resourceLimits: { maxOldGenerationSizeMb: heapMbOf(spec.memoryMb) },
      stdout: false,
      stderr: false,
    });
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (m: Message) => {
        if (m.type === "ready") return resolve();
        this.message(m);
      };
      this.worker.on("message", onMessage);
      this.worker.once("error", (err: Error & { code?: string }) => {
        this.dead = true;
        reject(err);
        this.fail(failureOf(err, this.spec));
      });
      this.worker.once("exit", () => {
        this.exited = true;
        this.dead = true;
        reject(new Error(`${spec.name}: the environment exited during init`));
        this.fail({ kind: "error", errorType: "Runtime.ExitError", errorMessage: "Runtime exited" });
        this.gone(this);
      });
    });
  }

  get busy() {
    return this.pending !== undefined;
  }

  run(event: unknown, p: Pending): void {
    const id = randomUUID();
    // The timeout counts from the invocation's start, not its arrival: as in Lambda, a wait for an environment
    // is no part of the function's time, and its code plans its work by getRemainingTimeInMillis.
    const deadline = Date.now() + this.spec.timeoutSeconds * 1000;
    // Lambda stops an invocation at its timeout by ending the environment; so does this.
    const timer = setTimeout(() => {
      this.dead = true;
      this.fail({
        kind: "error",
        errorType: "Sandbox.Timedout",
        errorMessage: `Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`,
      });
      void this.stop();
    }, this.spec.timeoutSeconds * 1000);
    this.pending = { id, p, timer };
    this.loopAtStart = this.worker.performance.eventLoopUtilization();
    this.worker.postMessage({ id, event, deadline, requestId: randomUUID(), traceId: newTraceId() });
  }

  /** The caller went away from a stream: the handler's stream sees `close`, as a Lambda stream does. */
  abort(): void {
    if (!this.exited) this.worker.postMessage({ type: "abort" });
  }

  private message(m: Exclude<Message, { type: "ready" }>) {
    const cur = this.pending;
    if (!cur || cur.id !== m.id) return;
    if (m.type === "chunk") return cur.p.chunk(Buffer.from(m.bytes));
    if (m.type === "end") return cur.p.end();
    if (m.stats) this.stats = m.stats;
    this.finish();
    if (m.type === "error") {
      cur.p.settle({ kind: "error", errorType: m.errorType, errorMessage: m.errorMessage });
      return cur.p.end();
    }
    if (m.streamed) return cur.p.end();
    cur.p.settle({ kind: "result", value: JSON.parse(m.json ?? "null") });
  }

  private finish() {
    if (this.pending) clearTimeout(this.pending.timer);
    if (this.loopAtStart && !this.exited)
      this.lastUtilization = this.worker.performance.eventLoopUtilization(this.loopAtStart).utilization;
    this.loopAtStart = undefined;
    this.pending = undefined;
  }

  private fail(outcome: Invocation) {
    const cur = this.pending;
    this.finish();
    if (!cur) return;
    cur.p.settle(outcome);
    cur.p.end();
  }

  async stop(): Promise<void> {
    this.dead = true;
    clearTimeout(this.idleTimer);
    if (!this.exited) await this.worker.terminate();
  }
}

/**
 * An invocation's X-Ray trace header, which Lambda hands the function as _X_AMZN_TRACE_ID: the AWS SDK sends it
 * on every call the function makes, so an Invoke it makes arrives marked as made from a running invocation.
 */
function newTraceId(): string {
  const hex = (bytes: number) => randomBytes(bytes).toString("hex");
  const epoch = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, "0");
  return `Root=1-${epoch}-${hex(12)};Parent=${hex(8)};Sampled=0`;
}

/** What Lambda reports when an environment dies: out of memory, or its init failed. */
function failureOf(err: Error & { code?: string }, spec: FunctionSpec): Invocation {
  if (err.code === "ERR_WORKER_OUT_OF_MEMORY")
    return {
      kind: "error",
      errorType: "Runtime.OutOfMemory",
      errorMessage: `Runtime exited: the function ran out of its ${spec.memoryMb} MB of memory`,
    };
  return {
    kind: "error",
    errorType: "Runtime.ExitError",
    errorMessage: `Runtime exited with error: ${err.message}`,
  };
}

/**
 * A function's execution environments: warm ones reused, new ones started up to its concurrency. Beyond
 * `queueBeyond` busy environments a queued invocation waits for a free one, in order of arrival: on a laptop's
 * few cores, environments started per concurrent request share the cores and each stays in V8's cold tiers
 * (Lambda gives each a machine of its own). Held-open and nested invocations are never queued.
 */
export class LocalFunction {
  private readonly environments = new Set<Environment>();
  private readonly idle: Environment[] = [];
  /** Invocations waiting for an environment, first come first served: handed one, or woken to look again. */
  private readonly waiting: ((env?: Environment) => void)[] = [];
  private stopped = false;
  /** Environments waiting for an init slot. */
  private starting = 0;
  /** The counts of environments that are gone. */
  private readonly retiredStats: RequestStats[] = [];

  constructor(readonly spec: FunctionSpec) {}

  /** Runs one invocation; a streamed answer's bytes arrive as the handler writes them. */
  async invoke(event: unknown, opts: InvokeOptions = {}): Promise<Invocation> {
    const queued = this.spec.queueBeyond !== undefined && !this.spec.heldOpen && !opts.nested;
    const env = await this.acquire(queued);
    if (!env)
      return { kind: "error", errorType: "ServiceException", errorMessage: "The function is stopped" };
    try {
      await env.ready;
    } catch (err) {
      this.release(env);
      return failureOf(err as Error, this.spec);
    }
    return new Promise<Invocation>((resolve) => {
      let settled = false;
      const queue: Buffer[] = [];
      let ended = false;
      let wake: (() => void) | undefined;
      const settle = (o: Invocation) => {
        if (settled) return;
        settled = true;
        resolve(o);
      };
      const bytes = async function* () {
        while (true) {
          if (queue.length) {
            yield queue.shift() as Buffer;
            continue;
          }
          if (ended) return;
          await new Promise<void>((r) => {
            wake = r;
          });
        }
      };
      // The answer once its first bytes (or its end) arrive: the rest follows through `bytes`.
      const streamed: Invocation = { kind: "stream", bytes: bytes(), abort: () => env.abort() };
      env.run(event, {
        settle: (o) => {
          settle(o);
          if (o.kind !== "stream") this.release(env);
        },
        chunk: (b) => {
          queue.push(b);
          wake?.();
          settle(streamed);
        },
        end: () => {
          ended = true;
          wake?.();
          settle(streamed);
          this.release(env);
        },
      });
    });
  }

  /**
   * Starts `count` environments ahead of any invocation and keeps them warm, as Lambda's provisioned concurrency
   * does: a burst of requests then meets no cold start (each is a bundle load, seconds on a laptop's few cores).
   */
  async provision(count: number): Promise<void> {
    const started: Environment[] = [];
    for (let i = 0; i < count; i++) {
      const env = await this.acquire(false);
      if (!env) break;
      env.provisioned = true;
      started.push(env);
    }
    await Promise.all(started.map((e) => e.ready.catch(() => {})));
    for (const e of started) this.release(e);
  }

  /**
   * Environments queued invocations may keep busy: enough to keep `queueBeyond` cores computing, as far as the
   * function's last invocations show how much of their time they compute. One that mostly waits (on DynamoDB,
   * through the proxy) gets more, up to QUEUE_STRETCH times as many; one that computes gets `queueBeyond`.
   */
  private queueCap(most: number): number {
    const base = this.spec.queueBeyond ?? most;
    const seen = [...this.environments].flatMap((e) =>
      e.lastUtilization === undefined ? [] : [e.lastUtilization],
    );
    if (!seen.length) return Math.min(most, base);
    const computing = seen.reduce((a, b) => a + b, 0) / seen.length;
    const wanted = Math.round(base / Math.max(computing, 1 / QUEUE_STRETCH));
    return Math.min(most, Math.max(base, wanted));
  }

  /** An environment for one invocation: a warm one, a new one while under the cap, else the next one freed. */
  private async acquire(queued: boolean): Promise<Environment | undefined> {
    const most = this.spec.maxConcurrency ?? 64;
    let woken = false;
    while (!this.stopped) {
      const cap = queued ? this.queueCap(most) : most;
      const warm = this.idle.pop();
      if (warm) {
        clearTimeout(warm.idleTimer);
        return warm;
      }
      if (this.environments.size + this.starting < cap) {
        // Invocations already waiting when this one arrived get the new environment first (none overtakes).
        const behind = queued && !woken && this.waiting.length > 0;
        this.starting++;
        const release = await initSlot().finally(() => this.starting--);
        if (this.stopped) {
          release();
          return undefined;
        }
        const env = new Environment(this.spec, (e) => this.forget(e));
        env.ready.then(release, release);
        this.environments.add(env);
        const head = behind ? this.waiting.shift() : undefined;
        if (!head) return env;
        head(env);
      }
      // Woken without an environment (one went away): it looks again ahead of later arrivals.
      const handed = await new Promise<Environment | undefined>((r) =>
        woken ? this.waiting.unshift(r) : this.waiting.push(r),
      );
      if (handed) return handed;
      woken = true;
    }
    return undefined;
  }

  private release(env: Environment) {
    if (env.dead) return this.forget(env);
    if (!this.environments.has(env) || env.busy || this.idle.includes(env)) return;
    // Handed straight to the longest waiting invocation, so none arriving later overtakes it.
    const next = this.waiting.shift();
    if (next) return next(env);
    this.idle.push(env);
    // Kept warm for good (a local stand-in for a schedule keeps its timer in its environment).
    if (!Number.isFinite(this.spec.idleMs ?? 0) || env.provisioned) return;
    env.idleTimer = setTimeout(() => {
      this.forget(env);
      void env.stop();
    }, this.spec.idleMs ?? defaultIdleMs());
    env.idleTimer.unref();
  }

  private forget(env: Environment) {
    if (this.environments.has(env) && env.stats) this.retiredStats.push(env.stats);
    this.environments.delete(env);
    const i = this.idle.indexOf(env);
    if (i >= 0) this.idle.splice(i, 1);
    this.waiting.shift()?.();
  }

  /** The request counts of every environment this function has had (PLATFORM_COUNT_REQUESTS). */
  requestStats(): RequestStats[] {
    return [...this.retiredStats, ...[...this.environments].flatMap((e) => (e.stats ? [e.stats] : []))];
  }

  /** How many environments are up (warm or busy). */
  get size(): number {
    return this.environments.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.waiting.splice(0)) w();
    await Promise.all([...this.environments].map((e) => e.stop()));
    this.environments.clear();
    this.idle.length = 0;
  }
}

/**
 * A response-streamed answer's metadata (status, headers) and its body, split where HttpResponseStream.from's
 * eight zero bytes end the metadata (API Gateway's format; the router and runtimes speak their own, a JSON line:
 * shared/agent/runtime/lambda-protocol.ts).
 */
export async function splitStreamMetadata(bytes: AsyncIterable<Buffer>): Promise<{
  prelude?: { statusCode?: number; headers?: Record<string, string> };
  body: AsyncIterable<Buffer>;
}> {
  const it = bytes[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  while (true) {
    const next = await it.next();
    // No prelude: the bytes are the body as written.
    if (next.done)
      return {
        body: (async function* () {
          if (head.length) yield head;
        })(),
      };
    head = Buffer.concat([head, next.value]);
    const end = head.indexOf(Buffer.alloc(8));
    if (end >= 0) {
      const prelude = JSON.parse(head.subarray(0, end).toString("utf8"));
      const rest = head.subarray(end + 8);
      const body = (async function* () {
        if (rest.length) yield rest;
        while (true) {
          const n = await it.next();
          if (n.done) return;
          yield n.value;
        }
      })();
      return { prelude, body };
    }
  }
}
