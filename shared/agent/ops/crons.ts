import { cancelCodes, transact } from "../../aws/ddb.ts";
import { Conflict, HttpError, NotFound } from "../../errors.ts";
import { logger } from "../../log.ts";
import { crons } from "../../records/agent.ts";
import { actWithin, inTurns } from "../../records/index-bound.ts";
import {
  countCrons,
  createCron,
  cronMoveOn,
  deleteCron,
  dueCrons,
  patchCron,
  searchCrons,
  tickId,
} from "../crons/crons.ts";
import { nextRunDate } from "../crons/schedule.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { createRun, type RunCreate } from "../runs/runs.ts";
import { RunNotStored } from "../runs/thread-lock.ts";
import type { Caller, OpsContext } from "./caller.ts";
import { cronAccess, cronCreateAccess, searchScope } from "./checks.ts";

// Crons: each operation looks the deployment up for the caller and asks the deployment's Auth (crons:create /
// read / update / delete / search) before it reads or writes. A cron on a thread needs the caller's update
// access to the thread too: its ticks create runs there, as its creator.

/** A cron whose ticks run on `threadId` (null: each tick on a new thread). */
export async function create(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  threadId: string | null,
  body: Parameters<typeof createCron>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  await cronCreateAccess(d, threadId, body);
  return createCron(d, threadId, body, s.clock());
}

export async function search(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: Omit<Parameters<typeof searchCrons>[1], "auth">,
) {
  const d = await s.deployment(caller, deploymentId);
  return searchCrons(d, { ...body, auth: await searchScope("crons:search", body) });
}

export async function count(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: Omit<Parameters<typeof countCrons>[1], "auth">,
) {
  const d = await s.deployment(caller, deploymentId);
  return countCrons(d, { ...body, auth: await searchScope("crons:search", body) });
}

export async function update(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  cronId: string,
  body: Parameters<typeof patchCron>[2],
) {
  const d = await s.deployment(caller, deploymentId);
  await cronAccess(d, cronId, "update", body as Record<string, unknown>);
  return patchCron(d, cronId, body, s.clock());
}

/** A tick in flight then finds it gone and creates nothing. */
export async function remove(s: OpsContext, caller: Caller, deploymentId: string, cronId: string) {
  const d = await s.deployment(caller, deploymentId);
  await cronAccess(d, cronId, "delete");
  await deleteCron(d, cronId);
}

// — ticks (a platform process's: the AgentCronTick task) —

export type TickOutcome = "fired" | "already-fired" | "skipped";

/** The platform acting for a cron: the tick has no request of its own; its run carries its creator (run_as). */
const platformFor = (tenant: string): Caller => ({ tenant, user: undefined });

/**
 * Fires one tick of a cron: the tick due at `scheduledAt` (its next_run_date), as a run created by `createRun`
 * like every other — with an id derived from (cron id, tick time), and the cron's move-on as a write that holds
 * with the run's own: the run, its thread's count (a stateless tick: its new thread) and the move-on are one
 * transaction, conditioned on the cron's next run still being the tick's. So a tick fired twice (a retried
 * invocation, two overlapping sweeps, a restart mid-tick) creates one run and moves the cron on once; a tick
 * whose write did not happen is still due and fires at the next sweep. The clock decides the next tick: missed
 * ticks (an outage longer than a minute) collapse into this one. The deployment's runtime is then kicked (a lost
 * kick is the sweeper's pending run).
 */
export async function tick(
  s: OpsContext,
  tenantId: string,
  deploymentId: string,
  cronId: string,
  scheduledAt: string,
): Promise<{ outcome: TickOutcome; run_id?: string; thread_id?: string }> {
  const now = s.clock();
  let d: AgentDeployment;
  try {
    d = await s.deployment(platformFor(tenantId), deploymentId);
  } catch (err) {
    // A deleted deployment's crons go with it (the deployment purge does not list them).
    if (err instanceof NotFound) {
      await crons.delete({ scope: `${tenantId}#${deploymentId}`, cron: cronId });
      logger.warn("cron of a deleted deployment removed", { cron_id: cronId, deployment_id: deploymentId });
      return { outcome: "skipped" };
    }
    throw err;
  }
  const cron = await crons.get({ scope: d.scope, cron: cronId }, true);
  if (!cron?.enabled || cron.next_run_date !== scheduledAt) return { outcome: "already-fired" };
  const tickMs = Date.parse(scheduledAt);
  const next = nextRunDate(cron.schedule, Math.max(tickMs, now - 60_000), cron.end_time) ?? null;
  const moveOn = cronMoveOn(d, cronId, scheduledAt, next);
  const skip = async (why: string) => {
    logger.warn("cron tick skipped", { cron_id: cronId, scheduled_at: scheduledAt, reason: why });
    await transact([moveOn]).catch((err) => {
      if (!cancelCodes(err)) throw err;
    });
    return { outcome: "skipped" as const };
  };
  if (cron.end_time && tickMs > Date.parse(cron.end_time)) return skip("past end_time");
  const stateless = cron.thread_id === null;
  const threadId = cron.thread_id ?? tickId(cronId, scheduledAt, "thread");
  const runId = tickId(cronId, scheduledAt, "run");
  const body = { ...(cron.payload as RunCreate), assistant_id: cron.assistant_id };
  try {
    await createRun(d, cron.thread_id, body, s.kick, {
      runId,
      threadId,
      at: new Date(now).toISOString(),
      threadMetadata: { cron_id: cronId },
      overrides: {
        // A tick's run has no client to disconnect; a stateless tick's thread goes as the cron says.
        on_disconnect: "continue",
        on_completion: stateless ? (cron.on_run_completed ?? "delete") : "keep",
        metadata: { cron_id: cronId },
        runAs: cron.run_as,
      },
      alongside: [moveOn],
    });
  } catch (err) {
    if (err instanceof RunNotStored) return { outcome: "already-fired" };
    // The assistant or the thread is gone, or the thread is busy and the cron's strategy is reject.
    if (err instanceof NotFound || err instanceof Conflict) return skip(err.message);
    throw err;
  }
  logger.info("cron tick fired", {
    cron_id: cronId,
    scheduled_at: scheduledAt,
    run_id: runId,
    thread_id: threadId,
  });
  return { outcome: "fired", run_id: runId, thread_id: threadId };
}

export interface CronSweep {
  fired: number;
  skipped: number;
  /** Due crons this sweep had no time left for: they stay due and fire at the next sweep. */
  deferred: number;
}

/**
 * How long one sweep starts ticks. A minute's sweep must end before the next (each tick is a run created and a
 * runtime kicked, tens of milliseconds): crons it did not reach stay due for the next sweep.
 */
export const CRON_SWEEP_BUDGET_MS = 40_000;

/**
 * Fires every due tick of every cron by the server's clock (the AgentCronTick task's sweep); `only` limits it to
 * one deployment's crons. Workspaces take turns (each one's first due cron, then each one's second, …) and the
 * sweep starts ticks for `budgetMs` at most, so a workspace with many crons — up to AGENT_MAX_SWEPT_ENTRIES per
 * deployment, of up to WORKSPACE_MAX_DEPLOYMENTS deployments — delays its own ticks, not another's (secreview4: 300
 * every-minute crons of one deployment, made through the API, had another workspace's cron fire minutes late).
 */
export async function sweep(
  s: OpsContext,
  only?: { tenant: string; deployment: string },
  budgetMs = CRON_SWEEP_BUDGET_MS,
): Promise<CronSweep> {
  const out: CronSweep = { fired: 0, skipped: 0, deferred: 0 };
  const now = s.clock();
  const dues = inTurns(
    (await dueCrons(now)).filter(
      (due) => !only || (only.tenant === due.tenant && only.deployment === due.deployment),
    ),
    (due) => due.tenant,
  );
  const outOfTime = "cron sweep out of time: the rest fire at the next sweep";
  out.deferred = await actWithin(dues, budgetMs, outOfTime, (due) => fireDue(s, due, now, out));
  return out;
}

/** One due cron's ticks still due by `now` (at most five, the index lagging its record), counted in `out`. */
async function fireDue(
  s: OpsContext,
  due: { tenant: string; deployment: string; cronId: string },
  now: number,
  out: CronSweep,
): Promise<void> {
  try {
    // The index lags the table: the cron's next run is read from its record, and tick reads it again and
    // fires only the tick still due.
    const key = { scope: `${due.tenant}#${due.deployment}`, cron: due.cronId };
    const item = await crons.get(key, true);
    for (let scheduled = item?.next_run_date ?? null, i = 0; scheduled && i < 5; i++) {
      if (Date.parse(scheduled) > now) break;
      const r = await tick(s, due.tenant, due.deployment, due.cronId, scheduled);
      if (r.outcome === "fired") out.fired++;
      else if (r.outcome === "skipped") out.skipped++;
      const after = await crons.get(key, true);
      scheduled = after?.enabled ? after.next_run_date : null;
    }
  } catch (err) {
    if (err instanceof HttpError)
      logger.warn("cron tick: deployment unavailable", { cron_id: due.cronId, error: err });
    else logger.error("cron tick failed", { cron_id: due.cronId, error: err });
  }
}
