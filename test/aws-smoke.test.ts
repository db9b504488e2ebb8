import { describe, expect, it } from "vitest";
import { smoke } from "../infra/admin/aws-smoke.ts";
import { base, facts } from "./helpers/cloud.ts";

// The smoke test the README's AWS guide runs after a first deploy passes against the local cloud, which runs
// what AWS runs: it can fail (a wrong key is refused, every step is asserted), so it is a check worth running there.
describe("npm run aws:smoke", () => {
  it("passes every check against the local cloud", async () => {
    const checks = await smoke({ api: base, apiKey: facts.api_key });
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(checks.map((c) => c.check)).toEqual([
      "health (system group)",
      "server info (platform group)",
      "an unknown key is refused",
      "create a tracing project (tables, key)",
      "trace a run and read it back (ingestion, payloads)",
      "list deployments (control group)",
      "list export destinations (export group)",
      "agent API router authenticates",
      "delete the project (purge task invoked)",
    ]);
  });

  it("fails, naming the step, when the key is not the workspace's", async () => {
    const checks = await smoke({
      api: base,
      apiKey: "lsv2_pt_0000000000000000000000000000000_0000000000",
      waitMs: 1000,
    });
    const failed = checks.filter((c) => !c.ok).map((c) => c.check);
    expect(failed).toContain("create a tracing project (tables, key)");
    expect(failed).toContain("list deployments (control group)");
    expect(checks.find((c) => c.check === "health (system group)")?.ok).toBe(true);
  });
});
