import { randomUUID } from "node:crypto";
import { logger } from "../../shared/log.ts";
import type { InvokeOptions } from "./function-host.ts";
import { withinTimeout } from "./function-timeout.ts";
import { awsError, errorFields } from "./sfn.ts";

// The local Lambda service: sync invoke awaits the handler; async (Event) invoke queues it in-process and retries a
// failure twice, as Lambda does for asynchronous invocations. A function created through Lambda's API (a
// deployment's runtime) is run as its configuration says: within its timeout, and its asynchronous invocations
// (drains) each holding a slot of its reservation while they run. A throttled event stays queued and is tried again
// with backoff until it is older than its MaximumEventAgeInSeconds, then dropped, as Lambda's queue does.
export type FunctionResolver = (
  nameOrArn: string,
) => ((event: unknown, how?: InvokeOptions) => Promise<unknown>) | undefined;

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

/**
 * The asynchronous events one caller (a principal: a deployment's runtime, a platform role) may have queued or
 * running at once for one function, in payload bytes: past it Invoke answers 429 TooManyRequestsException, so no
 * caller can fill the local cloud's memory with events (256 KB each) the service holds for it (issue 33, the third
 * review's M1). Per function too, because a platform role invokes for many deployments: the router starts the
 * drains a runtime's answers ask for (100 per answer, of that deployment's own function), and a hostile runtime's
 * drains, held by its own stalled function, filled the router's one bucket so that every other deployment's drain
 * was refused (secreview3). In AWS the queue is Lambda's, per function, not the platform's memory; what one
 * caller's events cost the others there is in docs/runtimes.md.
 */
export const ASYNC_BYTES_PER_CALLER = 16 * 1024 * 1024;

/** Lambda's backoff for a throttled asynchronous event, at most this long between tries. */
const MAX_THROTTLE_BACKOFF_MS = 5000;

const isThrottle = (err: unknown) => errorFields(err).code === "TooManyRequestsException";

export class LocalLambda {
  private readonly inflight = new Set<Promise<unknown>>();
  /** Payload bytes of the asynchronous events each caller has queued or running, per function (`<caller> <name>`). */
  private readonly held = new Map<string, number>();
  private stopping = false;
  constructor(
    private readonly resolve: FunctionResolver,
    private readonly retryDelayMs = 1000,
    private readonly settingsOf: (name: string) => FunctionSettings = () => ({ retries: 2 }),
    private readonly asyncBytesPerCaller = ASYNC_BYTES_PER_CALLER,
  ) {}

  /**
   * `origin`: who asked (the principal the proxy checked) and the request's payload size, for async bounds; and
   * whether a running invocation made the call (its trace header): a synchronous one is then never queued.
   */
  async invoke(
    name: string,
    payload: unknown,
    async: boolean,
    origin: { caller: string; bytes: number; nested?: boolean } = { caller: "", bytes: 0 },
  ): Promise<{ status: number; body: unknown; error?: string }> {
    const fn = this.resolve(name);
    if (!fn) throw awsError("ResourceNotFoundException", `Function not found: ${name}`, 404);
    if (!async) {
      try {
        const out = await withinTimeout(
          fn(payload, origin.nested ? { nested: true } : {}),
          this.settingsOf(name).timeoutSeconds,
          randomUUID(),
        );
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
    const { bytes } = origin;
    const caller = `${origin.caller} ${name}`;
    const held = this.held.get(caller) ?? 0;
    if (held + bytes > this.asyncBytesPerCaller)
      throw Object.assign(awsError("TooManyRequestsException", "Rate Exceeded.", 429), {
        Reason: "CallerRateLimitExceeded",
      });
    this.held.set(caller, held + bytes);
    const job = this.runAsync(name, fn, payload);
    this.inflight.add(job);
    job.finally(() => {
      this.inflight.delete(job);
      const left = (this.held.get(caller) ?? bytes) - bytes;
      if (left > 0) this.held.set(caller, left);
      else this.held.delete(caller);
    });
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
