#!/usr/bin/env node
// `npm test`: the unit and synth projects in a vitest of their own, beside the integration project's. The
// integration files run one at a time against one local cloud (their project has no file parallelism) and
// leave much of the CPU idle while they wait on runs, timers and builds; the unit files fill it. The unit run's
// output is held and printed after the integration run's, so neither is interleaved with the other.
// Arguments (`npm test -- <filter>`) run one vitest over every project, as `vitest run` does.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const vitestBin = join(root, "node_modules", "vitest", "vitest.mjs");
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

const held = [];
const unit = vitest(["--project", "unit", "--project", "synth"], ["ignore", "pipe", "pipe"]);
unit.child.stdout.on("data", (d) => held.push(d));
unit.child.stderr.on("data", (d) => held.push(d));
const integration = vitest(["--project", "integration"], "inherit");
for (const sig of ["SIGINT", "SIGTERM"])
  process.on(sig, () => {
    unit.child.kill(sig);
    integration.child.kill(sig);
  });

const integrationCode = await integration.exited;
const unitCode = await unit.exited;
process.stdout.write("\n── unit and synth projects (run beside the integration project) ──\n");
process.stdout.write(Buffer.concat(held));
const failed = [unitCode && "unit/synth", integrationCode && "integration"].filter(Boolean);
process.stdout.write(
  failed.length ? `\nnpm test: FAILED (${failed.join(", ")})\n` : "\nnpm test: all projects passed\n",
);
process.exit(failed.length ? 1 : 0);
