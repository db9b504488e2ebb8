import { describe, expect, it } from "vitest";
import { agentKeys } from "./agent.ts";
import { boundEntries, type IndexBound, inTurns } from "./index-bound.ts";

const runs = (max: number): IndexBound => ({ kind: "run", max });

const entry = (scope: string, real = true) => {
  const thread = crypto.randomUUID();
  const run = crypto.randomUUID();
  return {
    PK: real ? agentKeys.runsPk(scope, thread) : agentKeys.threadsPk(scope),
    SK: run,
    AGENT1PK: "AGENT#ACTIVE_RUNS#0",
    thread_id: thread,
    run_id: run,
  };
};

describe("the bound on a deployment's entries in the active-run index", () => {
  it("keeps every entry of a deployment within it", () => {
    const mine = Array.from({ length: 3 }, () => entry("t#a"));
    expect(boundEntries(mine, runs(3))).toEqual({ kept: mine, over: [] });
  });

  it("beyond it, keeps the bound per deployment, real runs' entries first; another deployment keeps all of its", () => {
    const forged = Array.from({ length: 5 }, () => entry("t#flood", false));
    const real = Array.from({ length: 2 }, () => entry("t#flood"));
    const victim = Array.from({ length: 3 }, () => entry("u#victim"));
    const { kept, over } = boundEntries([...forged, ...victim, ...real], runs(3));
    expect(kept.filter((e) => e.PK.includes("u#victim"))).toEqual(victim);
    const flood = kept.filter((e) => e.PK.includes("t#flood"));
    expect(flood).toHaveLength(3);
    expect(flood.slice(0, 2)).toEqual(real);
    expect(over).toHaveLength(4);
  });

  it("counts by the deployment of the item's key, whatever its index sort key claims", () => {
    // Every entry's PK is the flooding deployment's: it cannot claim the victim's share.
    const flood = Array.from({ length: 4 }, () => ({ ...entry("t#flood"), AGENT1SK: "u#victim#x#y" }));
    expect(boundEntries(flood, runs(2)).over).toHaveLength(2);
  });
});

describe("the same bound on the due-cron and expired-thread indexes", () => {
  const cron = (scope: string, real = true) => {
    const id = crypto.randomUUID();
    return {
      PK: agentKeys.cronsPk(scope),
      SK: real ? id : `${id}-x`,
      AGENT1PK: "AGENT#CRONS_DUE#0",
      cron_id: id,
    };
  };
  const thread = (scope: string) => {
    const id = crypto.randomUUID();
    return { PK: agentKeys.threadsPk(scope), SK: id, AGENT1PK: "AGENT#THREAD_TTL#0", thread_id: id };
  };

  it("keeps a deployment's crons due at once within it, real crons' first; another deployment keeps all of its", () => {
    const forged = Array.from({ length: 4 }, () => cron("t#flood", false));
    const real = Array.from({ length: 2 }, () => cron("t#flood"));
    const victim = Array.from({ length: 3 }, () => cron("u#victim"));
    const { kept, over } = boundEntries([...forged, ...victim, ...real], { kind: "cron", max: 3 });
    expect(kept.filter((e) => e.PK.includes("u#victim"))).toEqual(victim);
    expect(kept.filter((e) => e.PK.includes("t#flood")).slice(0, 2)).toEqual(real);
    expect(over).toHaveLength(3);
  });

  it("keeps a deployment's expired threads within it", () => {
    const flood = Array.from({ length: 5 }, () => thread("t#flood"));
    const victim = [thread("u#victim")];
    const { kept, over } = boundEntries([...flood, ...victim], { kind: "thread", max: 2 });
    expect(kept).toHaveLength(3);
    expect(kept).toContainEqual(victim[0]);
    expect(over).toHaveLength(3);
  });
});

describe("workspaces taking turns in a sweep", () => {
  it("takes each group's first entry, then each one's second, each group's order kept", () => {
    const e = (g: string, i: number) => ({ g, i });
    const list = [e("a", 0), e("a", 1), e("a", 2), e("b", 0), e("a", 3), e("c", 0), e("c", 1)];
    expect(inTurns(list, (x) => x.g)).toEqual([
      e("a", 0),
      e("b", 0),
      e("c", 0),
      e("a", 1),
      e("c", 1),
      e("a", 2),
      e("a", 3),
    ]);
    expect(inTurns([], (x: { g: string }) => x.g)).toEqual([]);
  });

  it("puts one workspace's single entry second behind another's thousand", () => {
    const flood = Array.from({ length: 1000 }, (_, i) => ({ t: "flood", i }));
    const out = inTurns([...flood, { t: "victim", i: 0 }], (x) => x.t);
    expect(out.findIndex((x) => x.t === "victim")).toBe(1);
    expect(out).toHaveLength(1001);
  });
});
