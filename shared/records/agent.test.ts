import { describe, expect, it } from "vitest";
import { agentKeys, deploymentOfPk, indexedAgentRecord } from "./agent.ts";

// The sweepers find a record's deployment from its PK (the sparse indexes hold items of every deployment).
describe("agent record keys: the deployment of a PK", () => {
  const scope = "t-1#d-1";
  const ids = { tenant: "t-1", deployment: "d-1" };

  it("a run's PK, whatever its thread id holds: a thread id with `#` is found (its runs are not locked forever)", () => {
    expect(deploymentOfPk(agentKeys.runsPk(scope, "5f0c1b7e-2a8b-4b8e-9d3c-1f2e3d4c5b6a"), "run")).toEqual(
      ids,
    );
    expect(deploymentOfPk(agentKeys.runsPk(scope, "a#b"), "run")).toEqual(ids);
    expect(deploymentOfPk(agentKeys.runsPk(scope, "a#RUN#b#THREAD"), "run")).toEqual(ids);
  });

  it("a thread's and a cron's PK", () => {
    expect(deploymentOfPk(agentKeys.threadsPk(scope), "thread")).toEqual(ids);
    expect(deploymentOfPk(agentKeys.cronsPk(scope), "cron")).toEqual(ids);
  });

  it("another kind's PK is no match", () => {
    expect(deploymentOfPk(agentKeys.threadsPk(scope), "run")).toBeUndefined();
    expect(deploymentOfPk(agentKeys.runsPk(scope, "x"), "thread")).toBeUndefined();
    expect(deploymentOfPk(agentKeys.eventsPk(scope, "r"), "run")).toBeUndefined();
  });
});

// Issue 25: a runtime may write any attribute of its own items, so a reader of the agent index trusts an item
// only when its keys are exactly those its repository builds of the ids it holds.
describe("agent index items: keys checked before they are trusted", () => {
  const scope = "t-1#d-1";
  const ids = { tenant: "t-1", deployment: "d-1" };
  const run = { PK: agentKeys.runsPk(scope, "th"), SK: "r-1", thread_id: "th", run_id: "r-1" };
  const thread = { PK: agentKeys.threadsPk(scope), SK: "th", thread_id: "th" };
  const cron = { PK: agentKeys.cronsPk(scope), SK: "c-1", cron_id: "c-1", thread_id: null };

  it("a run, thread or cron whose keys are its own gives its PK's tenant and deployment", () => {
    expect(indexedAgentRecord(run, "run")).toEqual(ids);
    expect(indexedAgentRecord(thread, "thread")).toEqual(ids);
    expect(indexedAgentRecord(cron, "cron")).toEqual(ids);
  });

  it("ids that do not rebuild the keys, another kind's item or a platform record are refused", () => {
    expect(indexedAgentRecord({ ...run, run_id: "r-2" }, "run")).toBeUndefined();
    expect(indexedAgentRecord({ ...run, thread_id: "other" }, "run")).toBeUndefined();
    expect(indexedAgentRecord({ ...run, thread_id: undefined }, "run")).toBeUndefined();
    expect(indexedAgentRecord({ ...thread, thread_id: "x" }, "thread")).toBeUndefined();
    expect(indexedAgentRecord({ ...cron, cron_id: "c-2" }, "cron")).toBeUndefined();
    expect(indexedAgentRecord({ ...thread, run_id: "th" }, "run")).toBeUndefined();
    expect(
      indexedAgentRecord({ PK: "T#t-1#DEPLOYMENT", SK: "d-1", thread_id: "d-1" }, "thread"),
    ).toBeUndefined();
    // The scope comes from the PK alone: a forged item of t-1#d-1 naming another deployment is still d-1's.
    expect(indexedAgentRecord({ ...run, SK: "r-1", scope: "t-2#d-2" } as typeof run, "run")).toEqual(ids);
  });
});
