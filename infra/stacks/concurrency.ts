import type { Node } from "constructs";
import type { TaskFunction } from "../../functions/task-manifest.ts";
import { TRACE_TASK } from "./agent-runtimes.ts";

// Lambda concurrency of the app (issues 26 and 35). A streamed agent run holds three concurrent executions (the
// router, the runtime serving the stream, the runtime executing the run) for up to 15 minutes, and every function
// of the account shares one regional pool: without a reservation, busy agents could leave the router, the
// sweepers, trace ingestion or export partitions none (and with one, each is also capped at it). A reservation
// must leave 100 of the account's quota unreserved, so on a new account (a quota of 10 or 50) none can be made.
// So the app reserves by default only where the operator has stated a quota that holds the defaults
// (`lambdaConcurrencyQuota`, e.g. 1000): unstated, nothing is reserved and `cdk deploy` works on any account.
// A reservation the operator sets is always made (and checked). Each deployment's runtime function reserves only
// when the operator says so (`runtimeReservedConcurrency`, unset: runtimes share the unreserved pool, and a
// runtime's throttle answers 429).

/** What the operator may set (`cdk deploy -c routerReservedConcurrency=300`); 0: that function reserves none. */
export const CONCURRENCY_CONTEXT = {
  router: "routerReservedConcurrency",
  sweeper: "sweeperReservedConcurrency",
  traceIngest: "traceIngestReservedConcurrency",
  deploy: "deployReservedConcurrency",
  exportPartition: "exportPartitionReservedConcurrency",
} as const;

/** Each deployment's runtime function: its reservation, which is also its cap (unset: none, AWS's default). */
export const RUNTIME_CONCURRENCY_CONTEXT = "runtimeReservedConcurrency";
/** The account's regional concurrency quota (`aws lambda get-account-settings`): what the arithmetic uses. */
export const ACCOUNT_CONCURRENCY_CONTEXT = "lambdaConcurrencyQuota";

export type ReservedConcurrency = Record<keyof typeof CONCURRENCY_CONTEXT, number>;

/**
 * The router: concurrent agent-server requests (streams and waits hold one each); a sweeper: one sweep at once;
 * deploy: revisions deployed at once (RevisionDeploy), so a push fan-out (up to 49) stays under Lambda's
 * control-plane rate (15 requests/s: https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html);
 * the rest wait in the revision machine's Deploy retry. Export partitions: the global cap on partition chunks
 * running at once across every workspace (one export's Map runs up to 45); the others are throttled and wait in
 * the export machine's retry of Lambda.TooManyRequestsException.
 */
export const DEFAULT_RESERVED_CONCURRENCY: ReservedConcurrency = {
  router: 200,
  sweeper: 1,
  traceIngest: 50,
  deploy: 4,
  exportPartition: 50,
};
/** Nothing reserved: the app's default unless a stated quota holds DEFAULT_RESERVED_CONCURRENCY. */
export const NO_RESERVATIONS: ReservedConcurrency = {
  router: 0,
  sweeper: 0,
  traceIngest: 0,
  deploy: 0,
  exportPartition: 0,
};
/** The task that deploys a revision's runtime. */
export const DEPLOY_TASK = "RevisionDeploy";
/** The task a bulk export's Map runs for each partition (infra/state-machines/bulk-export.asl.json). */
export const EXPORT_PARTITION_TASK = "ExportPartition";

/** The default regional concurrency of an account: https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html */
export const ACCOUNT_CONCURRENCY = 1000;
/** What reservations must leave unreserved: https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html */
export const MIN_UNRESERVED = 100;

/** The app's concurrency settings, read once from its context and checked. */
export interface Capacity {
  reserved: ReservedConcurrency;
  /** Each deployment's runtime reservation; undefined: runtimes reserve none. */
  runtime?: number;
  /** The account's regional concurrency quota the arithmetic assumes. */
  account: number;
  /** Whether the operator stated the quota (lambdaConcurrencyQuota); unstated, AWS's documented default is assumed. */
  quotaStated: boolean;
  /** What the platform's own functions reserve in all. */
  platform: number;
}

/** A task's reservation: a sweeper's (the tasks run on a schedule), trace ingestion's, the deploys', the export partitions', or none. */
export function reservedFor(task: TaskFunction, c: ReservedConcurrency): number | undefined {
  if (task.onLocalStart) return c.sweeper;
  if (task.name === DEPLOY_TASK) return c.deploy;
  if (task.name === EXPORT_PARTITION_TASK) return c.exportPartition;
  return task.name === TRACE_TASK ? c.traceIngest : undefined;
}

function count(node: Node, key: string, min: number): number | undefined {
  const v = node.tryGetContext(key);
  if (v === undefined || v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new Error(
      `${key} must be a whole number ≥ ${min}${min === 0 ? " (0: none reserved)" : ""}, not "${v}"`,
    );
  return n;
}

/**
 * The app's concurrency from its context, checked: whole numbers whose sum over the platform's functions (the
 * router and `tasks`) and one runtime's reservation leaves the account's 100 unreserved; a clear error otherwise.
 */
export function capacity(node: Node, tasks: TaskFunction[]): Capacity {
  const stated = count(node, ACCOUNT_CONCURRENCY_CONTEXT, 1);
  const account = stated ?? ACCOUNT_CONCURRENCY;
  const sum = (r: ReservedConcurrency) => tasks.reduce((n, t) => n + (reservedFor(t, r) ?? 0), r.router);
  // The defaults where a stated quota holds them; else none, so a new account's first deploy needs no flags.
  const holdsDefaults = stated !== undefined && sum(DEFAULT_RESERVED_CONCURRENCY) <= stated - MIN_UNRESERVED;
  const reserved = holdsDefaults ? { ...DEFAULT_RESERVED_CONCURRENCY } : { ...NO_RESERVATIONS };
  for (const [name, key] of Object.entries(CONCURRENCY_CONTEXT) as [keyof ReservedConcurrency, string][])
    reserved[name] = count(node, key, 0) ?? reserved[name];
  const runtime = count(node, RUNTIME_CONCURRENCY_CONTEXT, 1);
  const platform = sum(reserved);
  const flags = Object.values(CONCURRENCY_CONTEXT).map((k) => `-c ${k}=0`);
  if (platform > 0 && platform > account - MIN_UNRESERVED)
    throw new Error(
      `The platform's functions would reserve ${platform} concurrent executions; an account whose quota is ${account} ` +
        `(${ACCOUNT_CONCURRENCY_CONTEXT}) must keep ${MIN_UNRESERVED} unreserved: lower them, or on a new account ` +
        `reserve none (${flags.join(" ")})`,
    );
  if (runtime !== undefined && platform + runtime > account - MIN_UNRESERVED)
    throw new Error(
      `${RUNTIME_CONCURRENCY_CONTEXT}=${runtime}: with the platform's ${platform} reserved, an account whose quota is ` +
        `${account} has room for no deployment (${MIN_UNRESERVED} stay unreserved): leave it unset or lower it`,
    );
  return { reserved, runtime, account, quotaStated: stated !== undefined, platform };
}

/**
 * What the reservations need of the account's quota, as Lambda checks a reservation: nothing when none is made
 * (a new account whose quota is 10 reserves nothing and is within it), else the reservations (the platform's and
 * one runtime's) and the 100 that must stay unreserved.
 */
export function concurrencyNeeded(c: Pick<Capacity, "platform" | "runtime">): number {
  const reserved = c.platform + (c.runtime ?? 0);
  return reserved > 0 ? reserved + MIN_UNRESERVED : 0;
}

/** The reservations alone (the stacks' view of `capacity`). */
export const reservedConcurrency = (node: Node, tasks: TaskFunction[]): ReservedConcurrency =>
  capacity(node, tasks).reserved;

/** How many deployments' runtimes the account's quota holds at their reservation (undefined: none reserved). */
export function deploymentCeiling(c: Capacity): number | undefined {
  if (c.runtime === undefined) return undefined;
  return Math.floor((c.account - c.platform - MIN_UNRESERVED) / c.runtime);
}

/**
 * What a throttle answers. The router maps a runtime's (TooManyRequestsException) to 429 with Retry-After; a
 * throttled router or platform function never runs, and API Gateway answers that 500
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html).
 */
const THROTTLE_ANSWERS =
  "a throttled runtime answers 429 with Retry-After (a throttled router or platform function: API Gateway's 500)";

/** The concurrency arithmetic in words: what `cdk synth` and `npm run aws:preflight` print. */
export function describeCapacity(c: Capacity): string {
  if (c.platform === 0 && c.runtime === undefined)
    return c.quotaStated
      ? `Lambda concurrency: quota ${c.account} (${ACCOUNT_CONCURRENCY_CONTEXT}); nothing reserved: every function, the ` +
          `platform's and the runtimes', shares the ${c.account} executions, and ${THROTTLE_ANSWERS}`
      : `Lambda concurrency: quota not stated (${ACCOUNT_CONCURRENCY_CONTEXT}); nothing reserved: every function, the ` +
          `platform's and the runtimes', shares the account's pool, and ${THROTTLE_ANSWERS} ` +
          `(state a quota that holds them, -c ${ACCOUNT_CONCURRENCY_CONTEXT}=1000, to reserve the platform's defaults)`;
  const free = c.account - c.platform - MIN_UNRESERVED;
  const head = `Lambda concurrency: quota ${c.account} (${ACCOUNT_CONCURRENCY_CONTEXT}) − platform reserved ${c.platform} − ${MIN_UNRESERVED} kept unreserved = ${free}`;
  const ceiling = deploymentCeiling(c);
  if (ceiling === undefined || c.runtime === undefined)
    return (
      `${head}; runtimes reserve none (${RUNTIME_CONCURRENCY_CONTEXT} unset): no deployment ceiling from concurrency, ` +
      `every runtime shares the ${c.account - c.platform} unreserved executions, and ${THROTTLE_ANSWERS}`
    );
  return (
    `${head}; ${c.runtime} reserved per runtime (${RUNTIME_CONCURRENCY_CONTEXT}): at most ${ceiling} deployments ` +
    `(${free} / ${c.runtime}); each serves about ${Math.floor(c.runtime / 2)} streamed runs at once (a stream holds two)`
  );
}
