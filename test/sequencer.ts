import { basename } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds the slowest integration files took alone in a fresh-clone run. The files run side by side on a few
 * workers, so the run ends when the last file started does: the slow ones start first. A fresh clone has no
 * vitest cache of durations (vitest would start the largest files first); a later run's cache orders the rest.
 */
const SLOW_FILES: Record<string, number> = {
  // With the export and revision restart tests beside its own (one crash for the three): 139 s alone at load 16.
  "agent-worker.test.ts": 90,
  "isolation-sweep.test.ts": 82,
  "deployments.test.ts": 79,
  "agent-crons.test.ts": 47,
  "agent-runs.test.ts": 44,
  "agent-trace-stop.test.ts": 34,
  "console-exports.test.ts": 27,
  "console-traces.test.ts": 27,
  "github-webhook.test.ts": 25,
  "console-playground.test.ts": 24,
  "bulk-export-timeouts.test.ts": 23,
  "agent-runs-more.test.ts": 23,
  "bulk-export.test.ts": 20,
  "agent-store-index.test.ts": 19,
  "agent-store.test.ts": 19,
  "console-deployments.test.ts": 18,
  "route-fuzz.test.ts": 17,
};

export default class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const seconds = (f: TestSpecification) => SLOW_FILES[basename(f.moduleId)] ?? 0;
    const integration = sorted.filter((f) => f.project.name === "integration");
    // Array.prototype.sort is stable: the files vitest ordered keep its order behind the slow ones.
    integration.sort((a, b) => seconds(b) - seconds(a));
    return [...sorted.filter((f) => f.project.name !== "integration"), ...integration];
  }
}
