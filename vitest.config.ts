import { configDefaults, defineConfig } from "vitest/config";
import SlowFirst from "./test/sequencer.ts";

// Fuzz tests report their seed, and FUZZ_SEED/FUZZ_PATH replay one (test/fuzz-seed.ts).
const setupFiles = ["test/fuzz-seed.ts"];

/**
 * Unit files that replace a shared module with vi.mock: in a process that keeps modules between files, the module
 * their code under test imported first would be the real one (or the mock would reach the next file). They run
 * isolated, each in a fresh module graph; every other unit file shares one (isolate: false).
 */
const MOCKING_UNIT_TESTS = [
  "shared/auth/rate-limit.test.ts",
  "shared/agent/hosting/lambda-host-capacity.test.ts",
  "shared/runs/payloads.test.ts",
  "functions/agent/router.test.ts",
];

const SYNTH_TESTS = [
  "infra/stacks/stacks.test.ts",
  "infra/stacks/deploy-role.test.ts",
  "infra/stacks/concurrency.test.ts",
  "infra/stacks/exports.test.ts",
  "infra/quotas/template-checks.test.ts",
  "infra/policies/roles.test.ts",
  "infra/admin/teardown-plan.test.ts",
];

const UNIT_TESTS = [
  "shared/**/*.test.ts",
  "functions/**/*.test.ts",
  "infra/**/*.test.ts",
  "console/**/*.test.ts",
];

/** Integration files at once: each worker is a Node process holding little, waiting on the local cloud. */
// Two at a time: at four, a fresh-clone run on two cores passed once (12.1 min) and the next failed five files that
// time out under the load (a thread stream's 120 s, a crashed runtime's retry, a console poll, a 16 MiB upload).
const INTEGRATION_WORKERS = 2;

// Unit tests sit beside the code they test; integration and e2e tests under test/ share one local cloud.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // The slow integration files start first (test/sequencer.ts).
    sequence: { sequencer: SlowFirst },
    projects: [
      {
        test: {
          name: "unit",
          // The files run one after another in shared processes, modules kept between files (seconds of module
          // loading each otherwise); test/unit-hygiene.ts fails a file that leaves the process changed for the next.
          isolate: false,
          setupFiles: [...setupFiles, "test/unit-hygiene.ts"],
          include: UNIT_TESTS,
          exclude: [...configDefaults.exclude, ...SYNTH_TESTS, ...MOCKING_UNIT_TESTS],
          // Micro-benchmarks (`*.bench.ts`) sit beside the code too; only `vitest bench` runs them.
          benchmark: { include: ["shared/**/*.bench.ts", "functions/**/*.bench.ts", "infra/**/*.bench.ts"] },
          // Some unit tests load encoders or run esbuild; on a busy 2-core machine 5 s is not enough.
          testTimeout: 30_000,
        },
      },
      {
        // `--project 'unit*'` runs both unit projects.
        test: {
          name: "unit-mocks",
          setupFiles,
          include: MOCKING_UNIT_TESTS,
          // The unit project runs the micro-benchmarks.
          benchmark: { include: [] },
          testTimeout: 30_000,
        },
      },
      {
        // The tests of the whole synthesized app share one synth (infra/stacks/synthesized-app.ts): their files
        // run in one process that keeps modules between files, seconds of CPU each instead of one synth per file.
        test: {
          name: "synth",
          setupFiles,
          include: SYNTH_TESTS,
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 240_000,
        },
      },
      {
        test: {
          name: "integration",
          setupFiles,
          include: ["test/**/*.test.ts"],
          // No benchmarks here: the default pattern would run the unit ones again, after starting a local cloud.
          benchmark: { include: [] },
          globalSetup: ["test/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // The files run side by side against the one local cloud, each in a workspace of its own
          // (test/helpers/cloud.ts): they mostly wait on the cloud (runs, builds, timers), so more files than cores.
          maxWorkers: INTEGRATION_WORKERS,
        },
      },
    ],
  },
});
