import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sweepPlatform } from "../../harness/isolation-run.ts";
import { startPlatform } from "../../harness/platform.ts";
import { fuzzRoutes } from "../../harness/route-fuzz.ts";
import { fuzzFixtures } from "../../harness/route-fuzz-fixtures.ts";
import type { Knobs, Row } from "./summary.ts";

// Items 1 and 2 are built beside their tests (harness/route-fuzz.ts, harness/isolation-run.ts); here they
// run against a platform of their own, with the bench's seed and size.

/** Item 1: every route fuzzed, `knobs.fuzzRuns` requests each. */
export async function fuzzSweep(k: Knobs): Promise<Row[]> {
  const t0 = performance.now();
  const p = await startPlatform({ LOG_LEVEL: "error" });
  try {
    const fixtures = await fuzzFixtures(p.facts);
    try {
      const r = await fuzzRoutes({
        base: p.base,
        auth: { "X-Api-Key": p.facts.api_key, "X-Tenant-Id": p.facts.tenant_id },
        ids: fixtures.ids,
        runs: k.fuzzRuns,
        seed: k.seed,
      });
      return [
        {
          item: "fuzz",
          scenario: `every route, ${k.fuzzRuns} requests each`,
          trials: r.requests,
          failures: r.failures.length,
          figures: { routes: r.routes, requests: r.requests, "5xx": r.fiveXX, ...r.statuses },
          problems: [
            ...fixtures.missing.map((m) => `fixture not made: ${m}`),
            ...r.failures.map((f) => `${f.rule}: ${f.route} ${f.request} → ${f.status} ${f.answer}`),
          ],
          seconds: (performance.now() - t0) / 1000,
        },
      ];
    } finally {
      await fixtures.close();
    }
  } finally {
    await p.stop();
  }
}

/** Item 2: two workspaces, two deployments each, every route tried with the other's ids, logs grepped. */
export async function isolationSweep(_k: Knobs): Promise<Row[]> {
  const t0 = performance.now();
  const logDir = mkdtempSync(join(tmpdir(), "reliability-isolation-"));
  const logFile = join(logDir, "platform.log");
  const p = await startPlatform({ LOG_LEVEL: "debug" }, { logFile });
  try {
    const run = await sweepPlatform(p, logFile);
    try {
      const f = run.figures;
      return [
        {
          item: "isolation",
          scenario: "2 workspaces × 2 deployments, every route",
          trials: f.requests,
          failures: f.leaks,
          figures: {
            routes: f.routes,
            requests: f.requests,
            "routes×resources": f.routes_x_resources,
            leaks: f.leaks,
          },
          problems: [
            ...run.result.leaks.map((l) => `leak: ${JSON.stringify(l).slice(0, 300)}`),
            ...run.result.shown.map((l) => `shown: ${JSON.stringify(l).slice(0, 300)}`),
            ...run.result.secrets.map((l) => `secret: ${JSON.stringify(l).slice(0, 300)}`),
            ...run.secretLogLines.map((l) => `secret in log: ${l.slice(0, 200)}`),
          ],
          seconds: (performance.now() - t0) / 1000,
        },
      ];
    } finally {
      await run.close();
    }
  } finally {
    await p.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}
