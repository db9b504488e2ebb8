import { conditionalUpdate } from "../../aws/ddb.ts";
import { config } from "../../config.ts";
import { logger } from "../../log.ts";
import { indexedAgentRecord, type RunRecord } from "../../records/agent.ts";

// A bound on the entries one deployment has in the shared index of active runs (issue 33). A runtime's role may
// write any attribute of its own items, the index keys included, and IAM cannot limit their values: a runtime
// could fill the partitions every deployment's runs share and make each sweep read, fetch and kick without end.
// So the platform holds the bound where it reads: per deployment (the one of the item's PK, which the role's
// LeadingKeys makes trustworthy) the sweeper keeps AGENT_MAX_ACTIVE_RUNS entries, real runs' first, and takes the
// rest out of the index (their items stay; only a run a worker then loses is not retried). A deployment whose
// runs stay within the bound never loses an entry.

export type IndexEntry = Pick<RunRecord, "PK" | "SK" | "AGENT1PK" | "thread_id" | "run_id">;

/** `AGENT#<tenant>#<deployment>#…`: the deployment whose runtime could have written the item. */
const OWNER = /^AGENT#([^#]+#[^#]+)#/;

/** Entries by deployment, each within the bound (real runs' entries first), and those beyond it. */
export function boundEntries<E extends IndexEntry>(entries: E[], max: number): { kept: E[]; over: E[] } {
  const byOwner = new Map<string, E[]>();
  const over: E[] = [];
  for (const e of entries) {
    const owner = OWNER.exec(e.PK)?.[1];
    // An entry of no deployment's partition: only the platform writes those (none today); it is left alone.
    if (owner === undefined) continue;
    const list = byOwner.get(owner) ?? [];
    list.push(e);
    byOwner.set(owner, list);
  }
  const kept: E[] = [];
  for (const list of byOwner.values()) {
    if (list.length <= max) {
      kept.push(...list);
      continue;
    }
    const real = (e: E) => (indexedAgentRecord(e, "run") ? 0 : 1);
    const sorted = [...list].sort((a, b) => real(a) - real(b));
    kept.push(...sorted.slice(0, max));
    over.push(...sorted.slice(max));
  }
  return { kept, over };
}

/** Takes entries out of the index, each only if it is still the entry read; answers how many went. */
export async function dropIndexEntries(entries: IndexEntry[]): Promise<number> {
  let dropped = 0;
  const queue = [...entries];
  const worker = async () => {
    for (let e = queue.pop(); e; e = queue.pop()) {
      const gone = await conditionalUpdate(
        "main",
        { PK: e.PK, SK: e.SK },
        { remove: ["AGENT1PK", "AGENT1SK"], when: { AGENT1PK: e.AGENT1PK } },
      ).catch((err) => {
        logger.warn("run sweep: an index entry over the bound stayed", { error: err });
        return false;
      });
      if (gone) dropped++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return dropped;
}

/** The sweep's entries within the bound; the rest are taken out of the index, with a warning per deployment. */
export async function withinBound<E extends IndexEntry>(entries: E[]): Promise<E[]> {
  const { kept, over } = boundEntries(entries, config.agent.maxActiveRuns);
  if (over.length) {
    const owners = [...new Set(over.map((e) => OWNER.exec(e.PK)?.[1]))];
    const dropped = await dropIndexEntries(over);
    logger.warn("run sweep: deployments over their bound of active runs; entries beyond it left the index", {
      deployments: owners,
      bound: config.agent.maxActiveRuns,
      dropped,
    });
  }
  return kept;
}
