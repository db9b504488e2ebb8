import type { Node } from "constructs";
import type { TaskFunction } from "../../functions/task-manifest.ts";
import { TRACE_TASK } from "./agent-runtimes.ts";

// Reserved concurrency of the platform's own functions (issue 26). A streamed agent run holds three concurrent
// executions (the router, the runtime serving the stream, the runtime executing the run) for up to 15 minutes,
// and every function of the account shares one regional pool: without a reservation, busy agents could leave
// the router, the sweepers or trace ingestion none (and with one, each is also capped at it). Each deployment's
// runtime function gets its own reservation at deploy (AGENT_RUNTIME_RESERVED_CONCURRENCY, shared/config.ts).

/** What the operator may set (`cdk deploy -c routerReservedConcurrency=300`); 0: that function reserves none. */
export const CONCURRENCY_CONTEXT = {
  router: "routerReservedConcurrency",
  sweeper: "sweeperReservedConcurrency",
  traceIngest: "traceIngestReservedConcurrency",
  deploy: "deployReservedConcurrency",
} as const;

export type ReservedConcurrency = Record<keyof typeof CONCURRENCY_CONTEXT, number>;

/**
 * The router: concurrent agent-server requests (streams and waits hold one each); a sweeper: one sweep at once;
 * deploy: revisions deployed at once (RevisionDeploy), so a push fan-out (up to 49) stays under Lambda's
 * control-plane rate (15 requests/s: https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html);
 * the rest wait in the revision machine's Deploy retry.
 */
export const DEFAULT_RESERVED_CONCURRENCY: ReservedConcurrency = {
  router: 200,
  sweeper: 1,
  traceIngest: 50,
  deploy: 4,
};
/** The task that deploys a revision's runtime. */
export const DEPLOY_TASK = "RevisionDeploy";

/** The default regional concurrency of an account: https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html */
export const ACCOUNT_CONCURRENCY = 1000;
/** What reservations must leave unreserved: https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html */
export const MIN_UNRESERVED = 100;

/** A task's reservation: a sweeper's (the tasks run on a schedule), trace ingestion's, the deploys', or none. */
export function reservedFor(task: TaskFunction, c: ReservedConcurrency): number | undefined {
  if (task.onLocalStart) return c.sweeper;
  if (task.name === DEPLOY_TASK) return c.deploy;
  return task.name === TRACE_TASK ? c.traceIngest : undefined;
}

/**
 * The reservations from the app's context, checked: whole numbers ≥ 0 whose sum over the platform's functions
 * (the router and `tasks`) leaves the default account's 100 unreserved; a clear error otherwise.
 */
export function reservedConcurrency(node: Node, tasks: TaskFunction[]): ReservedConcurrency {
  const out = { ...DEFAULT_RESERVED_CONCURRENCY };
  for (const [name, key] of Object.entries(CONCURRENCY_CONTEXT) as [keyof ReservedConcurrency, string][]) {
    const v = node.tryGetContext(key);
    if (v === undefined || v === null || v === "") continue;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`${key} must be a whole number ≥ 0 (0: none reserved), not "${v}"`);
    out[name] = n;
  }
  const total = tasks.reduce((n, t) => n + (reservedFor(t, out) ?? 0), out.router);
  if (total > ACCOUNT_CONCURRENCY - MIN_UNRESERVED)
    throw new Error(
      `The platform's functions would reserve ${total} concurrent executions; an account's default of ${ACCOUNT_CONCURRENCY} ` +
        `must keep ${MIN_UNRESERVED} unreserved: lower ${Object.values(CONCURRENCY_CONTEXT).join(", ")}`,
    );
  return out;
}
