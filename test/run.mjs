#!/usr/bin/env node
// `npm test`: the integration project (its files side by side against one local cloud, vitest.config.ts) in one
// vitest, the unit and synth projects in another beside it. The integration run's output is shown as it comes; the
// unit run's is held and printed after it, so the two are not interleaved. The failed files of both runs are listed
// again at the very end with vitest's account of each failure (its error and where), so the last lines of a long log
// say what failed and why.
// Arguments (`npm test -- <filter>`) run one vitest over every project, as `vitest run` does.
import { spawn } from "node:child_process";
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

const runs = [
  // The integration files run side by side against one local cloud (vitest.config.ts), shown as they come.
  { name: "integration", run: vitest(["--project", "integration"], ["ignore", "pipe", "pipe"]) },
  {
    name: "unit/synth",
    run: vitest(
      ["--project", "unit", "--project", "unit-mocks", "--project", "synth"],
      ["ignore", "pipe", "pipe"],
    ),
    held: [],
  },
];
/** Lines naming a failed file or test (vitest's ` FAIL ` and `×` marks), colours stripped. */
const failures = [];
/** vitest's "Failed Tests" section of each run (errors, diffs, source lines), colours stripped, bounded. */
const details = [];
const DETAIL_LINES = 300;
for (const r of runs)
  for (const stream of [r.run.child.stdout, r.run.child.stderr]) {
    let partial = "";
    let inFailed = false;
    stream.on("data", (d) => {
      const lines = (partial + d).split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines.map(stripVTControlCharacters)) {
        if (/^\s*(FAIL|×) /.test(l)) failures.push(`${r.name}: ${l.trim()}`);
        if (/⎯ Failed (Tests|Suites) \d+ ⎯/.test(l)) inFailed = true;
        else if (/^\s*Test Files /.test(l)) inFailed = false;
        if (inFailed && details.length < DETAIL_LINES) details.push(`${r.name}: ${l}`);
      }
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
    process.stdout.write(`\n── ${r.name} (run beside the integration files) ──\n`);
    process.stdout.write(Buffer.concat(r.held));
  }
  if (code) failed.push(r.name);
}
if (details.length) process.stdout.write(`\n── why (vitest's failure reports) ──\n${details.join("\n")}\n`);
if (failures.length) process.stdout.write(`\n── what failed ──\n${[...new Set(failures)].join("\n")}\n`);
process.stdout.write(
  failed.length ? `\nnpm test: FAILED (${failed.join(", ")})\n` : "\nnpm test: all projects passed\n",
);
process.exit(failed.length ? 1 : 0);
