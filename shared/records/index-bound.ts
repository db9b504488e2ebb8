import { conditionalUpdate } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { logger } from "../log.ts";
import { type IndexedAgentItem, indexedAgentRecord } from "./agent.ts";

// A bound on the entries one deployment has in each shared partition of the agent index (AGENT1) that a platform
// sweep reads: the active runs (the run sweeper), the due crons (the cron tick) and the threads whose TTL ran out
// (the TTL sweep). A runtime's role may write any attribute of its own items, the index keys included, and IAM
// cannot limit their values (issue 33): a runtime could fill the partitions every deployment shares and make each
// sweep read, fetch and act without end — the cron tick of every workspace ran a minute late and skipped ticks
// behind 21,550 forged due crons a deployed graph wrote with its own runtime's keys (secreview3). So the platform
// holds the bound where it reads: per deployment (the one of the item's PK, which the role's LeadingKeys makes
// trustworthy) a sweep keeps `max` entries, real records' first, and takes the rest out of the index (their items
// stay). A deployment within the bound never loses an entry.

/** What a sweep reads of an index entry: the item's keys, the ids they are built of and its index key. */
export interface IndexEntry extends IndexedAgentItem {
  AGENT1PK?: string;
}

/** One sweep's index: the kind of record its entries are, and how many one deployment may have read and acted on. */
export interface IndexBound {
  kind: "run" | "cron" | "thread";
  /** Entries kept per deployment: AGENT_MAX_ACTIVE_RUNS for runs, AGENT_MAX_SWEPT_ENTRIES for crons and threads. */
  max: number;
}

/** The bounds of the three sweeps, from the settings. */
export const INDEX_BOUNDS = {
  activeRuns: (): IndexBound => ({ kind: "run", max: config.agent.maxActiveRuns }),
  dueCrons: (): IndexBound => ({ kind: "cron", max: config.agent.maxSweptEntries }),
  expiredThreads: (): IndexBound => ({ kind: "thread", max: config.agent.maxSweptEntries }),
};

/** `AGENT#<tenant>#<deployment>#…`: the deployment whose runtime could have written the item. */
const OWNER = /^AGENT#([^#]+#[^#]+)#/;

/** Entries by deployment, each within the bound (real records' entries first), and those beyond it. */
export function boundEntries<E extends IndexEntry>(
  entries: E[],
  bound: IndexBound,
): { kept: E[]; over: E[] } {
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
    if (list.length <= bound.max) {
      kept.push(...list);
      continue;
    }
    const real = (e: E) => (indexedAgentRecord(e, bound.kind) ? 0 : 1);
    const sorted = [...list].sort((a, b) => real(a) - real(b));
    kept.push(...sorted.slice(0, bound.max));
    over.push(...sorted.slice(bound.max));
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
        logger.warn("index sweep: an entry over the bound stayed", { error: err });
        return false;
      });
      if (gone) dropped++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return dropped;
}

/** The sweep's entries within the bound; the rest are taken out of the index, with a warning naming the deployments. */
export async function withinBound<E extends IndexEntry>(entries: E[], bound: IndexBound): Promise<E[]> {
  const { kept, over } = boundEntries(entries, bound);
  if (over.length) {
    const owners = [...new Set(over.map((e) => OWNER.exec(e.PK)?.[1]))];
    const dropped = await dropIndexEntries(over);
    logger.warn("index sweep: deployments over their bound of entries; entries beyond it left the index", {
      kind: bound.kind,
      deployments: owners,
      bound: bound.max,
      dropped,
    });
  }
  return kept;
}

/**
 * `entries` with each group (by `group`: a workspace) taking turns: every group's first entry, then every group's
 * second, and so on; each group's entries keep their order. What a platform sweep acts on in this order, one group's
 * number of entries delays that group's own, not another's.
 */
export function inTurns<E>(entries: E[], group: (e: E) => string): E[] {
  const groups = new Map<string, E[]>();
  for (const e of entries) {
    const key = group(e);
    const list = groups.get(key);
    if (list) list.push(e);
    else groups.set(key, [e]);
  }
  const out: E[] = [];
  let lists = [...groups.values()];
  for (let round = 0; lists.length; round++) {
    for (const list of lists) out.push(list[round]!);
    lists = lists.filter((list) => list.length > round + 1);
  }
  return out;
}

/**
 * Acts on `entries` in their order, one after another, until `budgetMs` has passed; answers how many it had no time
 * for (logged as `outOfTime`), which wait for the next sweep. A platform sweep's budget: it must end before the next.
 */
export async function actWithin<E>(
  entries: E[],
  budgetMs: number,
  outOfTime: string,
  act: (entry: E) => Promise<void>,
): Promise<number> {
  const until = performance.now() + budgetMs;
  for (const [i, entry] of entries.entries()) {
    if (performance.now() > until) {
      const deferred = entries.length - i;
      logger.warn(outOfTime, { deferred });
      return deferred;
    }
    await act(entry);
  }
  return 0;
}
