import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { config } from "../config.ts";
import { serveEgressSocket } from "../containment/egress.ts";
import { privateDir } from "../containment/private-dir.ts";
import {
  giveToSandbox,
  osSandbox,
  type SandboxedCommand,
  sandboxCanReach,
  sandboxedCommand,
} from "../containment/sandbox.ts";
import { sandboxNode } from "../containment/sandbox-node.ts";
import { BuildError } from "../errors.ts";
import type { SourceBuildJob } from "./build-source.ts";
import { type LogLine, networkEnv, redactor, run } from "./exec.ts";
import { TOOL_PATH } from "./npm-env.ts";
import { watchWrites } from "./write-watchdog.ts";

// Runs the untrusted step of a build (build-source.ts) in a child process with an environment built from
// nothing but the operator's proxy and CA settings: it gets its job (folders, the npm secrets it needs) in a file, and reports log lines on stdout.
/** The platform's checkout (or CodeBuild's source folder): the nearest folder up from this code with a package.json. */
function platformRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}
const ROOT = platformRoot();
const ENTRY = path.join(ROOT, "infra", "build", "build-source.ts");
/** Bundled beside the build step (infra/build/step-bundle.ts: CodeBuild's and the local cloud's), the same entry as one file. */
const BUNDLED_ENTRY = "build-source.mjs";

/** The untrusted step's bundle beside a bundled build step, if this is one. */
function bundledEntry(): string | undefined {
  const bundled = process.argv[1] ? path.join(path.dirname(process.argv[1]), BUNDLED_ENTRY) : "";
  return bundled && existsSync(bundled) ? bundled : undefined;
}
const TIMEOUT_MS = 20 * 60_000;

/**
 * The platform's files the untrusted step runs from (never the data folder): its bundle and the packages it
 * loads (esbuild, the graph runtime), or without a bundle its sources and their packages.
 */
function platformFiles(bundle: string | undefined): string[] {
  const sources = bundle
    ? [path.dirname(bundle)]
    : ["shared", path.join("infra", "build"), "package.json", "tsconfig.json"];
  return ["node_modules", ...sources].map((f) => path.resolve(ROOT, f));
}

/** The build's limits in its sandbox: an install and a bundle, not a service (npm, git, esbuild and their threads). */
export const BUILD_LIMITS = {
  memoryMb: 4096,
  cpuSeconds: 30 * 60,
  openFiles: 8192,
  scratchMb: 512,
  tasks: 1024,
};

/**
 * The command that runs `argv` (argv[0]: the sandbox's Node) in a build's sandbox: the system's tools and the
 * platform's code read-only, `writable` bound read-write and, with `extraOwned`, made the host uid's of `owner`'s
 * sandbox when the platform is root (sockets in them included).
 */
export async function buildSandboxCommand(
  argv: string[],
  opts: {
    owner: string;
    writable: string[];
    extraOwned?: string[];
    bundle?: string;
    env: Record<string, string>;
  },
): Promise<SandboxedCommand> {
  giveToSandbox(opts.owner, [...(opts.extraOwned ?? []), ...opts.writable]);
  return sandboxedCommand([await realpath(argv[0]), ...argv.slice(1)], {
    owner: opts.owner,
    readOnly: platformFiles(opts.bundle),
    readWrite: await Promise.all(opts.writable.map((d) => realpath(d))),
    cwd: ROOT,
    env: opts.env,
    limits: BUILD_LIMITS,
    tools: true,
  });
}

/**
 * Runs the untrusted step. On a host with the OS sandbox (shared/containment/sandbox.ts) it runs in it: read-only
 * binds of the system's tools and the platform's code and packages, read-write only its job's folders, no
 * network but the egress proxy (a Unix socket of its own, public addresses only), new processes allowed (npm
 * starts git and node) and the rest of the seccomp filter. Whether the workspace's code may run at all on a host
 * without it is the platform's decision, before the build starts (unsandboxedRefusal in RevisionBuildStart).
 * `owner` (the workspace's builds) decides its sandbox's host uid when the platform is root.
 */
export async function runSourceBuild(job: SourceBuildJob, log: LogLine, owner: string): Promise<void> {
  const home = path.join(job.scratch, "home");
  const tmp = path.join(job.scratch, "tmp");
  await Promise.all([home, tmp, job.out].map((d) => mkdir(d, { recursive: true })));
  const sandbox = config.localMode && osSandbox().available;
  // Workspaces' dependency trees: this user's alone.
  if (job.cacheDir) await privateDir(job.cacheDir);
  if (sandbox && job.cacheDir && !sandboxCanReach(job.cacheDir)) {
    // A cache in a folder others cannot enter (a DATA_DIR of mode 0700) is out of a root platform's sandboxes' reach.
    log(
      `build cache not used: ${job.cacheDir} is under a folder the build's sandbox user cannot enter (set BUILD_CACHE_DIR)`,
    );
    job = { ...job, cacheDir: undefined };
  }
  const egressDir = sandbox ? await mkdtemp(path.join(tmpdir(), "ap-b-")) : undefined;
  const egress = egressDir
    ? await serveEgressSocket(path.join(egressDir, "egress.sock"), { allow: config.sandbox.buildEgressAllow })
    : undefined;
  const jobFile = path.join(job.scratch, "job.json");
  await writeFile(
    jobFile,
    JSON.stringify({ ...job, ...(egressDir ? { egressSocket: path.join(egressDir, "egress.sock") } : {}) }),
    { mode: 0o600 },
  );
  const bundle = bundledEntry();
  const argv = [sandboxNode(), ...(bundle ? [bundle] : ["--import", "tsx", ENTRY]), jobFile];
  const env = { ...networkEnv(), PATH: TOOL_PATH, HOME: home, TMPDIR: tmp, LANG: "C" };
  const writable = [
    job.src,
    job.out,
    job.scratch,
    ...(job.cacheDir ? [job.cacheDir] : []),
    ...(egressDir ? [egressDir] : []),
  ];
  // The build's own work folder (holding src, out and scratch, job.json included) becomes its sandbox's too.
  const cmd = sandbox
    ? await buildSandboxCommand(argv, { owner, writable, extraOwned: [path.dirname(job.src)], bundle, env })
    : { command: argv[0]!, args: argv.slice(1), env, seccomp: undefined };
  let outcome: { ok?: true; error?: string; expected?: boolean } | undefined;
  // What it may add to the host folders it writes (their binds have no quota): past it, it is stopped.
  const tooMuch = new AbortController();
  let grown = 0;
  const watchdog = await watchWrites(writable, config.buildMaxWriteBytes, (g) => {
    grown = g;
    tooMuch.abort();
  });
  const r = await run(cmd.command, cmd.args, {
    signal: tooMuch.signal,
    cwd: ROOT,
    env: cmd.env,
    seccomp: cmd.seccomp,
    redact: redactor(Object.values(job.npmSecrets)),
    timeoutMs: TIMEOUT_MS,
    log: (line) => {
      let event: { log?: string; ok?: true; error?: string; expected?: boolean } | undefined;
      try {
        event = JSON.parse(line);
      } catch {
        event = undefined;
      }
      if (typeof event?.log === "string") log(event.log);
      else if (event && (event.ok || typeof event.error === "string")) outcome = event;
      else log(line);
    },
  });
  await watchdog.stop();
  egress?.close();
  if (egressDir) await rm(egressDir, { recursive: true, force: true });
  if (!tooMuch.signal.aborted && (await watchdog.grown()) > config.buildMaxWriteBytes) {
    grown = await watchdog.grown();
    tooMuch.abort();
  }
  if (tooMuch.signal.aborted)
    throw new BuildError(
      `the build wrote ${Math.round(grown / 2 ** 20)} MiB to its folders, more than the ${Math.round(config.buildMaxWriteBytes / 2 ** 20)} MiB a build may (BUILD_MAX_WRITE_BYTES): stopped`,
    );
  if (r.timedOut) throw new BuildError(`the build timed out after ${TIMEOUT_MS / 60_000} min`);
  if (outcome?.ok && r.code === 0) return;
  if (outcome?.error !== undefined)
    throw outcome.expected ? new BuildError(outcome.error) : new Error(outcome.error);
  throw new BuildError(`the build step ended without a result (exit code ${r.code ?? "none"})`);
}
