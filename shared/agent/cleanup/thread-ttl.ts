import { queryPage } from "../../aws/ddb.ts";
import { HttpError } from "../../errors.ts";
import { logger } from "../../log.ts";
import { AGENT_INDEX, indexedAgentRecord, THREAD_TTL, type ThreadRecord } from "../../records/agent.ts";
import { actWithin, INDEX_BOUNDS, inTurns, withinBound } from "../../records/index-bound.ts";
import { queryShards, shardKeys } from "../../records/shard.ts";
import { agentDeployment } from "../deployment/deployment.ts";
import { getThreadItem } from "../threads/threads.ts";
import { deleteThread } from "./threads.ts";

// Thread TTLs (`ttl` with strategy delete on threads.create/update): a thread whose TTL ran out is deleted with
// its runs, events and checkpoints by the run sweeper (every minute in AWS; locally when the next TTL runs out).
// Until then it is still served, as on the reference server, whose TTL sweep is periodic too.

/** What the index holds of a thread (keys and ids): its expiry is AGENT1SK, its record is read anyway. */
type Expiring = Pick<ThreadRecord, "PK" | "SK" | "thread_id" | "AGENT1PK" | "AGENT1SK">;

/**
 * How long one sweep deletes threads. The run sweeper's task deletes expired threads after it re-drives runs, and
 * locally its next sweep is armed when this one ends: a workspace's thousands of expired threads (up to
 * AGENT_MAX_SWEPT_ENTRIES in each of its deployments, each a delete of its runs, events and checkpoints) would
 * otherwise hold back every workspace's delayed runs and dead workers' runs. The rest are deleted at the next sweep.
 */
export const TTL_SWEEP_BUDGET_MS = 20_000;

/**
 * Deletes the threads whose TTL ran out by `now` for `budgetMs` at most; answers how many, how many it had no time
 * for (`deferred`: due again at once), and when the next TTL runs out.
 */
export async function sweepExpiredThreads(
  now = Date.now(),
  budgetMs = TTL_SWEEP_BUDGET_MS,
): Promise<{ deleted: number; deferred: number; nextCheck?: number }> {
  const all = await queryShards<Expiring>("main", THREAD_TTL, {
    IndexName: AGENT_INDEX,
    KeyConditionExpression: "AGENT1PK = :pk AND AGENT1SK <= :now",
    values: { ":now": new Date(now).toISOString() },
  });
  // At most AGENT_MAX_SWEPT_ENTRIES per deployment are acted on; the rest leave the index (records/index-bound.ts).
  const due = await withinBound(all, INDEX_BOUNDS.expiredThreads());
  let deleted = 0;
  // Workspaces take turns (records/index-bound.ts): one workspace's many threads delay its own, not another's.
  const turns = inTurns(due, (i) => indexedAgentRecord(i, "thread")?.tenant ?? "");
  const outOfTime = "thread TTL sweep out of time: the rest are deleted at the next sweep";
  const deferred = await actWithin(turns, budgetMs, outOfTime, async (item) => {
    const ids = indexedAgentRecord(item, "thread");
    if (!ids) return;
    try {
      const d = await agentDeployment(ids.tenant, ids.deployment);
      // The index lags: the thread's own record says whether its TTL (perhaps renewed since) ran out.
      const current = await getThreadItem(d, item.thread_id);
      if (!current?.ttl_expires_at || Date.parse(current.ttl_expires_at) > now) return;
      await deleteThread(d, item.thread_id);
      deleted++;
    } catch (err) {
      // A deleted deployment's threads go with its purge; a thread deleted meanwhile is gone already.
      if (!(err instanceof HttpError))
        logger.warn("thread TTL sweep failed", { thread_id: item.thread_id, error: err });
    }
  });
  if (deleted) logger.info("threads deleted by their TTL", { deleted });
  const firsts = await Promise.all(
    shardKeys(THREAD_TTL).map((pk) =>
      queryPage<Expiring>("main", {
        IndexName: AGENT_INDEX,
        KeyConditionExpression: "AGENT1PK = :pk AND AGENT1SK > :now",
        values: { ":pk": pk, ":now": new Date(now).toISOString() },
        Limit: 1,
      }),
    ),
  );
  const next = firsts.flatMap((p) => p.items.map((i) => Date.parse(i.AGENT1SK ?? ""))).filter((t) => t > 0);
  // Threads it had no time for are due now: the next sweep (which re-drives runs first) comes at once.
  if (deferred) next.push(Date.now());
  return { deleted, deferred, ...(next.length ? { nextCheck: Math.min(...next) } : {}) };
}
