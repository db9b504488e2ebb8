import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LAMBDA_UNZIPPED_CODE_BYTES, RUNTIME_LAYER_BUDGET_BYTES } from "../../shared/aws/lambda-limits.ts";
import { platformFunctions } from "../build/function-bundles.ts";
import {
  BUNDLE_BUDGET_BYTES,
  type BundleFacts,
  bundleQuotaRows,
  platformBundles,
  unwantedInputs,
} from "../quotas/bundle-quotas.ts";

// The bundles the CDK app deploys (the cached builds of infra/build/function-bundles.ts), held to Lambda's code
// size quota and the platform's own budget: small bundles, no tests, no development packages.
const bundles = platformBundles();

function folderOf(bytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), "bundle-quota-"));
  writeFileSync(join(dir, "index.mjs"), Buffer.alloc(bytes));
  return dir;
}
const failed = (b: BundleFacts) =>
  bundleQuotaRows([b])
    .filter((r) => !r.ok)
    .map((r) => r.check);

describe("bundle quotas", () => {
  it("every platform function's bundle passes every check", () => {
    const failures = bundleQuotaRows(bundles)
      .filter((r) => !r.ok)
      .map((r) => `${r.check}: ${r.subject} ${r.value} > ${r.limit}`);
    expect(failures).toEqual([]);
  });

  it("no bundle carries a test file or a package only development needs", () => {
    const unwanted = bundles.flatMap((b) => unwantedInputs(b).map((i) => `${b.id}: ${i}`));
    expect(unwanted).toEqual([]);
  });

  it("checks every function the CDK app deploys, the runtime layer among them", () => {
    const subjects = new Set(bundleQuotaRows(bundles).map((r) => r.subject.split(" ")[0]));
    expect([...subjects].sort()).toEqual(
      platformFunctions()
        .map((f) => f.id)
        .sort(),
    );
  });

  it("fails a bundle over the budget, with a test file or a dev-only package in it", () => {
    const b: BundleFacts = {
      id: "X",
      kind: "task",
      handler: "tasks/x",
      dir: folderOf(BUNDLE_BUDGET_BYTES + 1),
      inputs: ["functions/tasks/x.ts", "functions/tasks/x.test.ts", "node_modules/vitest/dist/index.js"],
    };
    expect(failed(b)).toEqual(["bundle bytes", "test files bundled", "dev-only packages bundled"]);
  });

  it("fails a runtime layer that leaves the largest accepted revision no room", () => {
    const layer = (bytes: number): BundleFacts => ({
      id: "AgentRuntime",
      kind: "runtime",
      handler: "agent/runtime",
      dir: folderOf(bytes),
      inputs: [],
    });
    expect(failed(layer(1024))).toEqual([]);
    expect(failed(layer(RUNTIME_LAYER_BUDGET_BYTES + 1))).toEqual([
      "bundle bytes",
      "runtime layer bytes",
      "runtime layer + largest accepted revision bytes",
    ]);
    const limit = bundleQuotaRows([layer(1)]).find((r) => r.check.startsWith("runtime layer +"))!.limit;
    expect(limit).toBe(LAMBDA_UNZIPPED_CODE_BYTES);
  });
});
