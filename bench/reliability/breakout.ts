import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Row } from "./summary.ts";

// Issue 25's break-out attempts, counted: each test of these files is one attack a hostile deployment (or its
// repository, or a forged request) makes against the platform or another workspace; a passing test is an
// attack stopped. They run on a local cloud of their own (vitest's integration project), as in `npm test`.
export const BREAKOUT_FILES: Record<string, string> = {
  "network (loopback services, egress, metadata)": "test/agent-breakout.test.ts",
  "processes, files, environment, globals": "test/agent-isolation.test.ts",
  "the console's origin (service worker, sandbox)": "test/agent-origin.test.ts",
  "the console's origin (content types, cookies)": "test/agent-origin-types.test.ts",
  "the build (.npmrc, symlinks, host paths)": "test/build-containment.test.ts",
  "forged index keys, other projects' runs": "test/agent-forged-keys.test.ts",
  "platform keys reaching a deployment": "test/agent-platform-key-stripped.test.ts",
  "the local IAM policy (SigV4, LeadingKeys, Deny)": "test/policy-proxy.test.ts",
  "S3 names the backend reads otherwise (copy source, .., entities)": "test/agent-s3-names.test.ts",
  "the local backends (unsigned, forged, unauthorized; CodeBuild stand-in)": "test/local-backends.test.ts",
  "calls whose shape names another service than their signature (target, form, path)":
    "test/aws-wire-breakout.test.ts",
  "a crashed runtime": "test/agent-runtime-crash.test.ts",
  "capacity (end users' flood, socket memory, deployments, active-run index, one workspace's crons)":
    "test/capacity-breakout.test.ts",
  "the sandbox's limits (output, namespaces, tasks, host uid, registry, Node)": "test/sandbox-limits.test.ts",
  "another workspace's local folders": "test/repo-grants.test.ts",
  "exports into the platform's own S3, a destination's endless or trickling answers":
    "test/export-breakout.test.ts",
  "storage (a runtime's own prefix past its budget, one object's size, the scans its budget asks for)":
    "test/storage-budget-breakout.test.ts",
  "webhooks (loopback, metadata, redirects, forged asks)": "test/agent-webhook-breakout.test.ts",
  "redirects that would carry the platform key out of the deployment": "test/agent-redirect-breakout.test.ts",
  "checkpoint items naming another workspace's S3 objects (TTL sweep, purge, copy)":
    "test/checkpoint-ref-breakout.test.ts",
};

interface VitestJson {
  testResults: { name: string; assertionResults: { title: string; status: string }[] }[];
}

export async function breakoutAttempts(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "breakout-"));
  const out = join(dir, "results.json");
  const t0 = performance.now();
  try {
    spawnSync(
      "npx",
      [
        "vitest",
        "run",
        "--project",
        "integration",
        "--reporter=json",
        `--outputFile=${out}`,
        ...Object.values(BREAKOUT_FILES),
      ],
      {
        stdio: ["ignore", "ignore", "inherit"],
        // As test/run.mjs: the integration setup's s3rver needs it (infra/local/s3.ts).
        env: { ...process.env, NODE_OPTIONS: "--openssl-legacy-provider" },
      },
    );
    const results = JSON.parse(readFileSync(out, "utf8")) as VitestJson;
    const seconds = (performance.now() - t0) / 1000;
    return Object.entries(BREAKOUT_FILES).map(([scenario, file]) => {
      const tests = results.testResults.find((r) => r.name.endsWith(file))?.assertionResults ?? [];
      const failed = tests.filter((t) => t.status === "failed");
      return {
        item: "breakout",
        scenario,
        trials: tests.length,
        failures: failed.length + (tests.length === 0 ? 1 : 0),
        figures: { attacks_tried: tests.length, attacks_stopped: tests.length - failed.length },
        problems: tests.length === 0 ? [`${file} did not run`] : failed.map((t) => `not stopped: ${t.title}`),
        seconds,
      };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
