import { describe, expect, it } from "vitest";
import { agentKeys, deploymentOfPk } from "./agent.ts";

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
