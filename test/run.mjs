#!/usr/bin/env node
// `npm test`: the unit and synth projects in a vitest of their own, beside the integration project's. The
// integration files run one at a time against a local cloud (their project has no file parallelism) and leave
// much of the CPU idle while they wait on runs, timers and builds: they are split into shards
// (TEST_INTEGRATION_SHARDS, 2 by default), each a vitest with a local cloud of its own, and the unit files fill
// what is left. The first shard's output is shown as it comes; the others' and the unit run's are held and
// printed after it, so none is interleaved with another. The failed files of every run are listed again at the very
// end, so the last lines of a long log say what failed.
// Arguments (`npm test -- <filter>`) run one vitest over every project, as `vitest run` does.
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const vitestBin = join(root, "node_modules", "vitest", "vitest.mjs");
// The integration project's global setup runs s3rver in vitest's own process: the flag is s3rver's (infra/local/s3.ts).
const env = {
  ...process.env,
  NODE_OPTIONS: [process.env.NODE_OPTIONS, "--openssl-legacy-provider"].join(" ").trim(),
};

function vitest(args, stdio) {
  const child = spawn(process.execPath, [vitestBin, "run", ...args], { cwd: root, env, stdio });
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.once("error", () => resolve(1));
  });
  return { child, exited };
}

const extra = process.argv.slice(2);
if (extra.length) process.exit(await vitest(extra, "inherit").exited);

/** Seconds the slowest integration files took in a fresh-clone run; the others count as 8. Balances the shards. */
const SLOW_FILES = {
  "isolation-sweep.test.ts": 82,
  "deployments.test.ts": 79,
  "agent-worker.test.ts": 61,
  "agent-crons.test.ts": 47,
  "agent-runs.test.ts": 44,
  "agent-trace-stop.test.ts": 34,
  "console-exports.test.ts": 27,
  "console-traces.test.ts": 27,
  "github-webhook.test.ts": 25,
  "console-playground.test.ts": 24,
  "bulk-export-restart.test.ts": 24,
  "bulk-export-timeouts.test.ts": 23,
  "agent-runs-more.test.ts": 23,
  "bulk-export.test.ts": 20,
  "agent-store-index.test.ts": 19,
  "agent-store.test.ts": 19,
  "deployments-restart.test.ts": 18,
  "console-deployments.test.ts": 18,
  "route-fuzz.test.ts": 17,
};

/** The integration files in `n` shards of about equal time (longest first, each to the least loaded shard). */
function integrationShards(n) {
  const files = readdirSync(join(root, "test"))
    .filter((f) => f.endsWith(".test.ts"))
    .sort((a, b) => (SLOW_FILES[b] ?? 8) - (SLOW_FILES[a] ?? 8) || a.localeCompare(b));
  const shards = Array.from({ length: n }, () => ({ files: [], seconds: 0 }));
  for (const f of files) {
    const least = shards.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    least.files.push(join(root, "test", f));
    least.seconds += SLOW_FILES[f] ?? 8;
  }
  return shards.filter((s) => s.files.length).map((s) => s.files);
}

const runs = [];
const shardCount = Math.max(1, Number(process.env.TEST_INTEGRATION_SHARDS ?? 2) || 1);
integrationShards(shardCount).forEach((files, i) => {
  const shown = i === 0;
  const run = vitest(["--project", "integration", ...files], ["ignore", "pipe", "pipe"]);
  runs.push({ name: `integration shard ${i + 1}`, run, held: shown ? undefined : [] });
});
runs.push({
  name: "unit/synth",
  run: vitest(["--project", "unit", "--project", "synth"], ["ignore", "pipe", "pipe"]),
  held: [],
});
/** Lines naming a failed file or test (vitest's ` FAIL ` and `×` marks), colours stripped. */
const failures = [];
for (const r of runs)
  for (const stream of [r.run.child.stdout, r.run.child.stderr]) {
    let partial = "";
    stream.on("data", (d) => {
      const lines = (partial + d).split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines.map(stripVTControlCharacters))
        if (/^\s*(FAIL|×) /.test(l)) failures.push(`${r.name}: ${l.trim()}`);
      if (r.held) r.held.push(d);
      else (stream === r.run.child.stdout ? process.stdout : process.stderr).write(d);
    });
  }

for (const sig of ["SIGINT", "SIGTERM"])
  process.on(sig, () => {
    for (const r of runs) r.run.child.kill(sig);
  });

const failed = [];
for (const r of runs) {
  const code = await r.run.exited;
  if (r.held) {
    process.stdout.write(`\n── ${r.name} (run beside the first integration shard) ──\n`);
    process.stdout.write(Buffer.concat(r.held));
  }
  if (code) failed.push(r.name);
}
if (failures.length) process.stdout.write(`\n── what failed ──\n${[...new Set(failures)].join("\n")}\n`);
process.stdout.write(
  failed.length ? `\nnpm test: FAILED (${failed.join(", ")})\n` : "\nnpm test: all projects passed\n",
);
process.exit(failed.length ? 1 : 0);
