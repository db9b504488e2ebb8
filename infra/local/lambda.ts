import { randomUUID } from "node:crypto";
import { logger } from "../../shared/log.ts";
import { withinTimeout } from "./function-timeout.ts";
import { awsError, errorFields } from "./sfn.ts";

// The local Lambda service: sync invoke awaits the handler; async (Event) invoke queues it in-process and retries a
// failure twice, as Lambda does for asynchronous invocations. A function created through Lambda's API (a
// deployment's runtime) is run as its configuration says: within its timeout, and its asynchronous invocations
// (drains) each holding a slot of its reservation while they run. A throttled event stays queued and is tried again
// with backoff until it is older than its MaximumEventAgeInSeconds, then dropped, as Lambda's queue does.
export type FunctionResolver = (nameOrArn: string) => ((event: unknown) => Promise<unknown>) | undefined;

/** How Lambda runs one function's invocations (its configuration; the platform's own tasks have none). */
export interface FunctionSettings {
  /** Retries of a failed asynchronous invocation (PutFunctionEventInvokeConfig; Lambda's default: 2). */
  retries: number;
  /** How long an asynchronous event may wait (throttled) before it is dropped (Lambda's default: 6 h). */
  maxEventAgeSeconds?: number;
  /** The function's timeout in seconds; no deadline when undefined. */
  timeoutSeconds?: number;
  /** Takes a slot of the function's reservation (throws TooManyRequestsException when none is free); its release. */
  acquire?: () => () => void;
}

/** Lambda's backoff for a throttled asynchronous event, at most this long between tries. */
const MAX_THROTTLE_BACKOFF_MS = 5000;

const isThrottle = (err: unknown) => errorFields(err).code === "TooManyRequestsException";

export class LocalLambda {
  private readonly inflight = new Set<Promise<unknown>>();
  private stopping = false;
  constructor(
    private readonly resolve: FunctionResolver,
    private readonly retryDelayMs = 1000,
    private readonly settingsOf: (name: string) => FunctionSettings = () => ({ retries: 2 }),
  ) {}

  async invoke(
    name: string,
    payload: unknown,
    async: boolean,
  ): Promise<{ status: number; body: unknown; error?: string }> {
    const fn = this.resolve(name);
    if (!fn) throw awsError("ResourceNotFoundException", `Function not found: ${name}`, 404);
    if (!async) {
      try {
        const out = await withinTimeout(fn(payload), this.settingsOf(name).timeoutSeconds, randomUUID());
        return { status: 200, body: out ?? null };
      } catch (err) {
        const e = errorFields(err);
        return {
          status: 200,
          body: { errorType: e.name ?? "Error", errorMessage: String(e.message ?? err) },
          error: "Unhandled",
        };
      }
    }
    const job = this.runAsync(name, fn, payload);
    this.inflight.add(job);
    job.finally(() => this.inflight.delete(job));
    return { status: 202, body: null };
  }

  private async runAsync(name: string, fn: (e: unknown) => Promise<unknown>, payload: unknown) {
    const queued = Date.now();
    await new Promise((r) => setImmediate(r));
    const settings = this.settingsOf(name);
    const attempts = 1 + settings.retries;
    const maxAgeMs = (settings.maxEventAgeSeconds ?? 21_600) * 1000;
    let backoff = 100;
    for (let attempt = 0; attempt < attempts && !this.stopping; ) {
      let release: (() => void) | undefined;
      try {
        release = settings.acquire?.();
      } catch (err) {
        if (!isThrottle(err)) {
          // The function went away while its event waited: there is nothing left to run it.
          logger.warn("async invocation dropped", { function: name, error: err });
          return;
        }
        // Throttled: the event waits its turn (a throttle is no attempt), until it is too old to run.
        if (Date.now() - queued + backoff > maxAgeMs) {
          logger.warn("async invocation dropped: throttled past its maximum event age", {
            function: name,
            max_event_age_seconds: maxAgeMs / 1000,
          });
          return;
        }
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, MAX_THROTTLE_BACKOFF_MS);
        continue;
      }
      attempt++;
      try {
        await withinTimeout(fn(payload), settings.timeoutSeconds, randomUUID());
        return;
      } catch (err) {
        // Its slot is free while it waits to be retried.
        release?.();
        if (this.stopping) return;
        logger.error("async invocation failed", { function: name, attempt: attempt - 1, error: err });
        if (attempt < attempts) await new Promise((r) => setTimeout(r, this.retryDelayMs));
      } finally {
        release?.();
      }
    }
  }

  /** The cloud is stopping: queued and retried asynchronous invocations end (no environment starts for them). */
  stop(): void {
    this.stopping = true;
  }

  async drain(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }
}
