import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { type FunctionBundle, functionBundles } from "../infra/build/function-bundles.ts";
import { fmt } from "./load.ts";

// Each Lambda's bundle loaded as Lambda loads it: a fresh Node process, heap capped at the function's memory,
// importing index.mjs and reading its handler export. Init = the import; peak RSS from resourceUsage().maxRSS.
const run = promisify(execFile);
const CHILD = `
// Lambda's Node runtime defines these globals before it loads the handler's module.
globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
const t0 = performance.now();
const mod = await import(process.argv[1]);
const ok = typeof mod.handler === "function";
const initMs = performance.now() - t0;
process.stdout.write(JSON.stringify({ ok, initMs, maxRssKb: process.resourceUsage().maxRSS }));
process.exit(0);`;

interface Loaded {
  fn: FunctionBundle;
  ok: boolean;
  initMs: number;
  rssMb: number;
}

/** What a function's environment must hold for its module to load (names only; nothing is called). */
function environment(taskRoot: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    AWS_REGION: "us-east-1",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    LOG_LEVEL: "error",
    // The runtime before any graph loads: its settings name no graph, its code folder is empty.
    LAMBDA_TASK_ROOT: taskRoot,
    AGENT_RUNTIME_CONFIG: JSON.stringify({
      tenant_id: "t",
      deployment_id: "d",
      revision_id: "r",
      graphs: [],
      tracing_project_id: null,
    }),
  };
}

async function load(fn: FunctionBundle, env: NodeJS.ProcessEnv): Promise<Loaded> {
  const { stdout } = await run(
    process.execPath,
    [`--max-old-space-size=${fn.memoryMb}`, "--input-type=module", "-e", CHILD, pathToFileURL(fn.file).href],
    { env, timeout: 60_000 },
  );
  const r = JSON.parse(stdout) as { ok: boolean; initMs: number; maxRssKb: number };
  return { fn, ok: r.ok, initMs: r.initMs, rssMb: r.maxRssKb / 1024 };
}

const groupOf = (f: FunctionBundle) =>
  f.kind === "route"
    ? `API ${f.group}`
    : f.kind === "router"
      ? "agent router"
      : f.kind === "task"
        ? "tasks"
        : "agent runtime (layer)";

/** Loads every platform function's bundle three times, one at a time, and prints a row per group. */
export async function lambdaStartupBench(): Promise<void> {
  const fns = functionBundles();
  const taskRoot = mkdtempSync(join(tmpdir(), "lambda-root-"));
  const env = environment(taskRoot);
  const loaded: Loaded[] = [];
  try {
    // Each bundle three times, its median kept: one load on a busy machine is as often the machine as the bundle.
    for (const fn of fns) {
      const runs = [await load(fn, env), await load(fn, env), await load(fn, env)];
      const median = runs.sort((a, b) => a.initMs - b.initMs)[1];
      loaded.push({ ...median, ok: runs.every((r) => r.ok), rssMb: Math.max(...runs.map((r) => r.rssMb)) });
    }
  } finally {
    rmSync(taskRoot, { recursive: true, force: true });
  }
  console.log(
    `Lambda bundles loaded as Lambda loads them (Node ${process.versions.node}; Lambda runs nodejs22.x)`,
  );
  console.log(
    "| group | functions | init ms p50 / max (each function's median of 3) | slowest | peak RSS MB max | memory MB | peak / memory max | goal |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  const groups = new Map<string, Loaded[]>();
  for (const l of loaded) groups.set(groupOf(l.fn), [...(groups.get(groupOf(l.fn)) ?? []), l]);
  for (const [name, ls] of groups) {
    const init = ls.map((l) => l.initMs).sort((a, b) => a - b);
    const slowest = ls.reduce((a, b) => (b.initMs > a.initMs ? b : a)).fn.id;
    const worst = ls.reduce((a, b) => (b.rssMb / b.fn.memoryMb > a.rssMb / a.fn.memoryMb ? b : a));
    const memories = [...new Set(ls.map((l) => l.fn.memoryMb))].join("/");
    const runtime = ls[0].fn.kind === "runtime";
    const initGoal = runtime ? 500 : 300;
    const met =
      init.at(-1)! <= initGoal && ls.every((l) => l.rssMb <= l.fn.memoryMb / 2) && ls.every((l) => l.ok);
    console.log(
      `| ${name} | ${ls.length} | ${fmt(init[Math.floor(init.length / 2)], 0)} / ${fmt(init.at(-1)!, 0)} | ${slowest} | ${fmt(Math.max(...ls.map((l) => l.rssMb)), 0)} | ${memories} | ${fmt((100 * worst.rssMb) / worst.fn.memoryMb, 0)}% (${worst.fn.id}) | init ≤ ${initGoal} ms, peak ≤ 50%: ${met ? "met" : "**not met**"} |`,
    );
  }
  const failed = loaded.filter((l) => !l.ok).map((l) => l.fn.id);
  if (failed.length) {
    console.log(`bundles without a handler export: ${failed.join(", ")}`);
    process.exitCode = 1;
  }
}
