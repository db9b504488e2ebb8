import { logger } from "../../log.ts";
import {
  ACTIVE_RUNS,
  AGENT_INDEX,
  CRONS_DUE,
  type CronRecord,
  indexedAgentRecord,
  type RunRecord,
  THREAD_TTL,
  type ThreadRecord,
} from "../../records/agent.ts";
import { REVISIONS_INFLIGHT, type RevisionRecord, revisions } from "../../records/control.ts";
import { type IndexKeys, moveToShards, type ShardedKey } from "../../records/shard.ts";

// Earlier versions kept the sparse partitions (active runs, thread TTLs, due crons, revisions in flight) under
// one constant key each: the agent records' first in the platform's GSI1 (a runtime may write AGENT1's keys,
// not GSI1's), then in AGENT1. This moves the entries they left (a local DATA_DIR, a deployed table) to the
// shards of today's keys: idempotent, each move conditional on the entry being unchanged, and only for items
// whose keys are an agent record's or a revision's (anything else keeps its keys and is ignored by every reader).

const GSI1: IndexKeys = { name: "GSI1", partitionKey: "GSI1PK", sortKey: "GSI1SK" };
const AGENT1: IndexKeys = { name: AGENT_INDEX, partitionKey: "AGENT1PK", sortKey: "AGENT1SK" };

type Indexed = RunRecord | ThreadRecord | CronRecord;
const KINDS: [ShardedKey, "run" | "thread" | "cron", (i: Indexed) => string | undefined][] = [
  [ACTIVE_RUNS, "run", (i) => (i as RunRecord).run_id],
  [THREAD_TTL, "thread", (i) => (i as ThreadRecord).thread_id],
  [CRONS_DUE, "cron", (i) => (i as CronRecord).cron_id],
];

/** Moves index entries under the unsharded keys of earlier versions to their shards; answers how many moved. */
export async function moveAgentIndexEntries(): Promise<number> {
  let moved = 0;
  for (const [key, kind, idOf] of KINDS) {
    const own = (i: Indexed) => (indexedAgentRecord(i, kind) ? idOf(i) : undefined);
    for (const index of [GSI1, AGENT1])
      moved += await moveToShards<Indexed>("main", { index, pk: key.base }, { index: AGENT1, key }, own);
  }
  moved += await moveToShards<RevisionRecord & { PK: string; SK: string }>(
    "main",
    { index: GSI1, pk: REVISIONS_INFLIGHT.base },
    { index: GSI1, key: REVISIONS_INFLIGHT },
    (i) => (revisions.owns(i) ? i.id : undefined),
  );
  if (moved) logger.info("index entries moved to their shards", { moved });
  return moved;
}
