import { batchGet } from "../../aws/batch.ts";
import { transact } from "../../aws/ddb.ts";
import { HttpError } from "../../errors.ts";
import { logger } from "../../log.ts";
import { ACTIVE_RUNS, AGENT_INDEX, indexedAgentRecord, type RunRecord, runs } from "../../records/agent.ts";
import { INDEX_BOUNDS, type IndexEntry, inTurns, withinBound } from "../../records/index-bound.ts";
import { queryShards } from "../../records/shard.ts";
import { isoNow } from "../../time.ts";
import { type AgentDeployment, agentDeployment } from "../deployment/deployment.ts";
import type { RuntimeHost } from "../hosting/runtime-host.ts";
import { finish } from "./finish.ts";
import { MAX_RUN_ATTEMPTS } from "./settings.ts";
import { unlockForRetry } from "./thread-lock.ts";

// The run sweeper (AgentRunSweeper: at local start-up, and on a schedule in AWS). It reads the sparse index
// of active runs and re-drives what no worker is doing: a running run whose lease ran out (its worker died)
// goes back to pending with attempt + 1 — or, after MAX_RUN_ATTEMPTS, fails with a reason; a cancel that
// reached a dead run is carried out; a pending run that is due gets its thread kicked.
const T = "main" as const;

export interface SweepResult {
  retried: number;
  failed: number;
  kicked: number;
  /** When the next lease runs out or delayed run is due (ms epoch), if any. */
  nextCheck?: number;
}

/**
 * `host` is how the caller reaches runtimes (a due thread is kicked through it), as its entry point built it: the
 * sweeper task's (functions/agent/platform.ts), the local cloud's when one of its runtimes crashed; `now` is the
 * caller's clock. `only` limits a sweep to one deployment; `deadWorker` names a runtime known to be gone (it crashed): its
 * running runs are taken back at once instead of when their leases run out; `cause` says what stopped it (a
 * sandbox limit), for the error of a run that is given up.
 */
export async function sweepRuns(
  host: Pick<RuntimeHost, "kick">,
  now = Date.now(),
  opts: { only?: { tenant: string; deployment: string }; deadWorker?: string; cause?: string } = {},
): Promise<SweepResult> {
  const kick = (d: AgentDeployment, threadId: string) => host.kick(d.tenant_id, d.deployment_id, threadId);
  const out: SweepResult = { retried: 0, failed: 0, kicked: 0 };
  const soon = (t: number) => {
    out.nextCheck = Math.min(out.nextCheck ?? t, t);
  };
  // The index holds keys and ids: the runs are read from the table (consistently: the index lags).
  const all = await queryShards<IndexEntry>(T, ACTIVE_RUNS, {
    IndexName: AGENT_INDEX,
    KeyConditionExpression: "AGENT1PK = :pk",
  });
  // At most AGENT_MAX_ACTIVE_RUNS entries per deployment are read on and acted on (records/index-bound.ts).
  const entries = await withinBound(all, INDEX_BOUNDS.activeRuns());
  // Workspaces take turns (records/index-bound.ts): one workspace's many runs delay its own, not another's.
  const items = inTurns(
    await batchGet<RunRecord>(
      T,
      entries.map((e) => ({ PK: e.PK, SK: e.SK })),
    ),
    (item) => indexedAgentRecord(item, "run")?.tenant ?? "",
  );
  const deployments = new Map<string, Promise<AgentDeployment | undefined>>();
  const kicked = new Set<string>();
  for (const item of items) {
    const ids = indexedAgentRecord(item, "run");
    if (!ids) continue;
    if (opts.only && (ids.tenant !== opts.only.tenant || ids.deployment !== opts.only.deployment)) continue;
    const key = `${ids.tenant}#${ids.deployment}`;
    if (!deployments.has(key))
      deployments.set(
        key,
        agentDeployment(ids.tenant, ids.deployment).catch((err) => {
          // A deleted deployment's runs go with its purge; one not deployed yet waits for the next sweep.
          if (!(err instanceof HttpError)) logger.warn("run sweep: deployment unavailable", { error: err });
          return undefined;
        }),
      );
    const d = await deployments.get(key);
    if (!d) continue;
    try {
      if (item.status === "running") {
        const dead = opts.deadWorker !== undefined && item.worker === opts.deadWorker;
        const leaseUntil = item.lease_until ?? 0;
        if (!dead && leaseUntil > now) soon(leaseUntil);
        else if (await recover(d, item, dead ? opts.cause : undefined)) {
          if (item.cancel_action) continue;
          if ((item.attempt ?? 1) >= MAX_RUN_ATTEMPTS) out.failed++;
          else out.retried++;
          kicked.add(`${key}#${item.thread_id}`);
          await kick(d, item.thread_id);
        }
      } else if (item.status === "pending") {
        if (item.not_before && item.not_before > now) soon(item.not_before);
        else if (!kicked.has(`${key}#${item.thread_id}`)) {
          kicked.add(`${key}#${item.thread_id}`);
          out.kicked++;
          await kick(d, item.thread_id);
        }
      }
    } catch (err) {
      logger.error("run sweep failed", { run_id: item.run_id, error: err });
    }
  }
  return out;
}

/** Takes a run back from a dead worker; false when the run moved on meanwhile (its worker was alive). */
async function recover(d: AgentDeployment, item: RunRecord, cause?: string): Promise<boolean> {
  if (item.cancel_action) {
    await finish(d, item, { status: "cancelled" }, {}, [], item.cancel_action);
    return true;
  }
  const at = isoNow();
  const attempt = item.attempt ?? 1;
  const rk = { scope: d.scope, thread: item.thread_id, run: item.run_id };
  const giveUp = attempt >= MAX_RUN_ATTEMPTS;
  const error = `The run's worker stopped ${attempt} times before the run finished${cause ? `; the last time ${cause}` : ""}`;
  const run = runs.updateInput(rk, {
    set: giveUp
      ? { status: "error", updated_at: at, error: { error: "WorkerLost", message: error } }
      : { status: "pending", updated_at: at, attempt: attempt + 1 },
    when: { status: "running", lease_until: item.lease_until },
    remove: giveUp ? ["lease_until", "worker", "AGENT1PK", "AGENT1SK"] : ["lease_until", "worker"],
  });
  try {
    await transact([{ Update: run }, unlockForRetry(d, item, at, giveUp ? error : undefined)]);
    logger.warn(giveUp ? "run failed: its workers kept dying" : "run retried: its worker stopped", {
      run_id: item.run_id,
      attempt,
    });
    return true;
  } catch (err) {
    logger.warn("run sweep: run moved on", { run_id: item.run_id, error: err });
    return false;
  }
}
