import { logger } from "../../shared/log.ts";
import { awsError, errorFields } from "./sfn.ts";

// The local Lambda service: sync invoke awaits the handler; async (Event) invoke queues it in-process
// and retries a failure twice, as Lambda does for asynchronous invocations.
export type FunctionResolver = (nameOrArn: string) => ((event: unknown) => Promise<unknown>) | undefined;

export class LocalLambda {
  private readonly inflight = new Set<Promise<unknown>>();
  private stopping = false;
  constructor(
    private readonly resolve: FunctionResolver,
    private readonly retryDelayMs = 1000,
    /** How often a function's failed asynchronous invocation is retried (PutFunctionEventInvokeConfig; default 2). */
    private readonly retriesOf: (name: string) => number = () => 2,
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
        return { status: 200, body: (await fn(payload)) ?? null };
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
    await new Promise((r) => setImmediate(r));
    const attempts = 1 + this.retriesOf(name);
    for (let attempt = 0; attempt < attempts && !this.stopping; attempt++) {
      try {
        await fn(payload);
        return;
      } catch (err) {
        if (this.stopping) return;
        logger.error("async invocation failed", { function: name, attempt, error: err });
        await new Promise((r) => setTimeout(r, this.retryDelayMs));
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
