import { describe, expect, it } from "vitest";
import { loadTemplates } from "../quotas/cfn-render.ts";
import { synthesizedApp } from "../stacks/synthesized-app.ts";
import { deletionOrder, formatPlan, runtimeDeployments, teardownPlan } from "./teardown-plan.ts";

// Issue 35: `npm run aws:teardown` cannot run against AWS here; its plan is worked out from the synthesized app,
// and that is what is tested: runtimes first, then each stack after those that depend on it, then what is kept.
describe("the teardown plan", () => {
  it("removes the runtimes first: only functions named agent-rt-<deployment>", () => {
    expect(runtimeDeployments(["agent-rt-d1", "agent-platform-ExportPlan", "other", "agent-rt-d2"])).toEqual([
      "d1",
      "d2",
    ]);
  });

  it("removes a runtime found by its role alone (a first deploy that failed before CreateFunction), once each", () => {
    // Its role still carries the runtime boundary, which the workflows stack's deletion must be able to delete.
    expect(runtimeDeployments(["agent-rt-d1"], ["agent-rt-d1", "agent-rt-d3", "other-role"])).toEqual([
      "d1",
      "d3",
    ]);
  });

  it("deletes a stack only after every stack that depends on it", () => {
    const order = deletionOrder([
      { name: "Data", dependsOn: [] },
      { name: "Workflows", dependsOn: ["Data"] },
      { name: "Api", dependsOn: ["Data", "Workflows"] },
      { name: "Console", dependsOn: ["Api"] },
    ]);
    expect(order).toEqual(["Console", "Api", "Workflows", "Data"]);
    expect(() =>
      deletionOrder([
        { name: "A", dependsOn: ["B"] },
        { name: "B", dependsOn: ["A"] },
      ]),
    ).toThrow(/cycle/);
  });

  it("for the synthesized app: console, API, workflows, data; the data stack's tables and buckets are kept", async () => {
    const { dir } = await synthesizedApp();
    const plan = teardownPlan(dir, loadTemplates(dir), ["agent-rt-abc"]);
    expect(plan.runtimes).toEqual(["abc"]);
    expect(plan.stacks).toEqual([
      "AgentPlatformConsole",
      "AgentPlatformApi",
      "AgentPlatformWorkflows",
      "AgentPlatformData",
    ]);
    const kept = plan.retained.filter((r) => r.stack === "AgentPlatformData").map((r) => r.type);
    expect(kept).toContain("AWS::DynamoDB::Table");
    expect(kept).toContain("AWS::S3::Bucket");
    const text = formatPlan(plan);
    expect(text.indexOf("agent-rt-abc")).toBeLessThan(text.indexOf("AgentPlatformConsole"));
    expect(text.indexOf("AgentPlatformData")).toBeLessThan(text.indexOf("Kept by CloudFormation"));
  }, 240_000);
});
