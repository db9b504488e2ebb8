import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../records/control.ts";
import { redeploysOnUpgrade } from "./runtime-upgrade.ts";

// Issue 26: a runtime left on an older platform layer is redeployed (its live revision), once.
const d = (over: Partial<DeploymentRecord>) =>
  ({
    id: "d",
    tenant_id: "t",
    latest_revision_id: "r1",
    active_revision_id: "r1",
    ...over,
  }) as DeploymentRecord;

describe("redeploying a stale runtime", () => {
  it("redeploys the live revision of a deployment with nothing else in flight", () => {
    expect(redeploysOnUpgrade(d({}))).toBe(true);
  });
  it("leaves one whose newer revision is in flight or failed (the upgrade's own redeploy among them), or none live", () => {
    expect(redeploysOnUpgrade(d({ latest_revision_id: "r2" }))).toBe(false);
    expect(redeploysOnUpgrade(d({ active_revision_id: null }))).toBe(false);
    expect(redeploysOnUpgrade(undefined)).toBe(false);
  });
});
