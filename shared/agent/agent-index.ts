import { conditionalUpdate, queryAll } from "../aws/ddb.ts";
import { logger } from "../log.ts";
import {
  ACTIVE_RUNS_PK,
  CRONS_DUE_PK,
  type CronRecord,
  indexedAgentRecord,
  type RunRecord,
  THREAD_TTL_PK,
  type ThreadRecord,
} from "../records/agent.ts";

// Agent records once kept their sparse partitions (active runs, thread TTLs, due crons) in the platform's GSI1.
// They moved to AGENT1, whose keys a runtime may write (GSI1's it may not). This moves the entries earlier
// versions left in GSI1 (a local DATA_DIR, a deployed table): idempotent, each move conditional on the entry
// being unchanged, and only for items whose keys are an agent record's (anything else keeps its GSI1 keys and
// is ignored by every reader).

type Legacy = (RunRecord | ThreadRecord | CronRecord) & { GSI1PK: string; GSI1SK: string };
const LEGACY: [string, "run" | "thread" | "cron"][] = [
  [ACTIVE_RUNS_PK, "run"],
  [THREAD_TTL_PK, "thread"],
  [CRONS_DUE_PK, "cron"],
];

/** Moves agent records' entries from GSI1 to AGENT1; answers how many moved. */
export async function moveAgentIndexEntries(): Promise<number> {
  let moved = 0;
  for (const [pk, kind] of LEGACY) {
    const items = await queryAll<Legacy>("main", {
      IndexName: "GSI1",
      KeyConditionExpression: "GSI1PK = :pk",
      values: { ":pk": pk },
    });
    for (const item of items) {
      if (!indexedAgentRecord(item, kind)) continue;
      const done = await conditionalUpdate(
        "main",
        { PK: item.PK, SK: item.SK },
        {
          set: { AGENT1PK: item.GSI1PK, AGENT1SK: item.GSI1SK },
          when: { GSI1PK: item.GSI1PK, GSI1SK: item.GSI1SK },
          remove: ["GSI1PK", "GSI1SK"],
        },
      );
      if (done) moved++;
    }
  }
  if (moved) logger.info("agent index entries moved from GSI1 to AGENT1", { moved });
  return moved;
}
