import type { Route } from "../../functions/routes.ts";
import { routeId } from "../../functions/routes.ts";
import type { TaskFunction } from "../../functions/task-manifest.ts";
import type { RequestStats } from "../../shared/aws/request-stats.ts";
import type { HttpEvent, HttpResult } from "../../shared/http/event.ts";
import type { LambdaHttpHandler } from "../../shared/http/handler.ts";
import { type FunctionBundle, functionBundles } from "../build/function-bundles.ts";
import { FunctionError } from "./function-error.ts";
import { type Invocation, type InvokeOptions, LocalFunction, splitStreamMetadata } from "./function-host.ts";

// The platform's functions as the local cloud runs them: each from the bundle the CDK app deploys
// (infra/build/function-bundles.ts), with the memory, timeout and environment it has there, in execution
// environments started on its first invocation and kept warm (infra/local/function-host.ts).

export interface LocalFunctionsOptions {
  /**
   * What a function's environment holds besides its own settings: the local endpoints, settings and the
   * credentials of its role (the policy proxy checks each of its calls against that role's policy).
   */
  environment: (f: FunctionBundle) => Record<string, string>;
  /** The functions and their bundles (default: the platform's, built if their sources changed). */
  bundles?: FunctionBundle[];
  /** Functions that must stay warm (the local stand-ins of schedules keep timers in their environment). */
  keepWarm?: (f: FunctionBundle) => boolean;
  /** Environments a function's queued invocations keep busy at once (LOCAL_FUNCTION_ENVIRONMENTS); none: no queue. */
  queueBeyond?: number;
}

export class LocalFunctions {
  private readonly byId: Map<string, FunctionBundle>;
  private readonly running = new Map<string, LocalFunction>();
  private stopped = false;

  constructor(private readonly opts: LocalFunctionsOptions) {
    this.byId = new Map((opts.bundles ?? functionBundles()).map((f) => [f.id, f]));
  }

  /** The function of construct id `id`, its environments started on first use. */
  get(id: string): LocalFunction {
    const known = this.running.get(id);
    if (known) return known;
    // Work still in flight when the cloud stops starts no environment that would outlive it.
    if (this.stopped) throw new Error(`The local cloud is stopping: ${id} starts no environment`);
    const f = this.byId.get(id);
    if (!f) throw new Error(`No platform function ${id}`);
    const fn = new LocalFunction({
      name: f.id,
      entry: f.file,
      memoryMb: f.memoryMb,
      timeoutSeconds: f.timeoutSeconds,
      environment: { ...this.opts.environment(f), ...f.environment },
      ...(this.opts.queueBeyond !== undefined ? { queueBeyond: this.opts.queueBeyond } : {}),
      ...(f.heldOpen ? { heldOpen: true } : {}),
      ...(this.opts.keepWarm?.(f) ? { idleMs: Number.POSITIVE_INFINITY } : {}),
    });
    this.running.set(id, fn);
    return fn;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** A route's handler for the gateway: its function invoked with the event, its answer as API Gateway reads it. */
  route(route: Route): LambdaHttpHandler {
    const id = routeId(route);
    const handler = async (event: HttpEvent): Promise<HttpResult> =>
      httpResult(await this.get(id).invoke(event));
    return handler as LambdaHttpHandler;
  }

  /** The agent router (functions/agent/router.ts): a REST API event in, its response-streamed answer out. */
  router(event: unknown): Promise<HttpResult> {
    return this.get("AgentRouter").invoke(event).then(httpResult);
  }

  /** A task's handler: its function invoked with the event; a failure thrown as Lambda reports it. */
  task(task: Pick<TaskFunction, "name">): (event: unknown, how?: InvokeOptions) => Promise<unknown> {
    const id = `Task-${task.name}`;
    return async (event, how) => {
      const out = await this.get(id).invoke(event, how);
      if (out.kind === "error") throw new FunctionError(out.errorType, out.errorMessage);
      if (out.kind === "stream")
        throw new FunctionError("Runtime.InvalidResponse", `${id} streamed an answer`);
      return out.value;
    };
  }

  /** The request counts of every function's environments (PLATFORM_COUNT_REQUESTS). */
  requestStats(): RequestStats[] {
    return [...this.running.values()].flatMap((f) => f.requestStats());
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running.values()].map((f) => f.stop()));
    this.running.clear();
  }
}

/** A route function's answer as the gateway writes it; a failed invocation is thrown (the gateway answers 500). */
async function httpResult(out: Invocation): Promise<HttpResult> {
  if (out.kind === "error") throw new FunctionError(out.errorType, out.errorMessage);
  if (out.kind === "result") return out.value as HttpResult;
  // A response-streamed function (LAMBDA_RESPONSE_STREAMING): its status and headers, then its body as written.
  const { prelude, body } = await splitStreamMetadata(out.bytes);
  return {
    statusCode: prelude?.statusCode ?? 200,
    headers: prelude?.headers,
    stream: body as AsyncIterable<unknown> as AsyncIterable<string>,
    onAbort: () => out.abort(),
  };
}
