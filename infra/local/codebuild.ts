import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BUILD_ENV } from "../../shared/build/build-exchange.ts";
import { tolerateStdioErrors, toolEnv } from "../../shared/build/exec.ts";
import { config } from "../../shared/config.ts";
import { cleanLine } from "../../shared/containment/sandbox-output.ts";
import { logger } from "../../shared/log.ts";
import { inputsHash, unhashedInputs } from "../build/inputs-hash.ts";
import { BUILD_SCRIPT, BUILD_STEP_ENTRIES, stepBundleOptions } from "../build/step-bundle.ts";

// What a local CodeBuild build runs (control-plane/codebuild.ts serves the API): the build step (infra/build/) in a
// child process with the build's environment, as the CodeBuild project runs it in AWS — the same bundles
// (infra/build/step-bundle.ts). Its exit code is the build's outcome.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Under the checkout, so the bundles' external packages (esbuild, TypeScript) resolve from its node_modules. */
const BUNDLES = join(ROOT, ".cache", "build-step");

let bundled: Promise<string> | undefined;

/** What the build step's bundles may read besides node_modules (checked against esbuild's metafile). */
const STEP_SOURCE_DIRS = ["infra/build", "shared"];
const STEP_HASHED_FILES = ["package-lock.json", "tsconfig.json", "infra/local/codebuild.ts"];

/**
 * The build step's bundles, in a folder named by the hash of their inputs and built only when it is missing, so
 * platforms sharing the checkout (tests) share a folder no one rewrites while another's build runs from it, and a
 * start with unchanged sources bundles nothing.
 */
export function bundleLocalBuildStep(): Promise<string> {
  bundled ??= (async () => {
    const options = BUILD_STEP_ENTRIES.map(([entry, file]) => ({
      ...stepBundleOptions(entry, join(BUNDLES, file)),
      absWorkingDir: ROOT,
    }));
    const dir = join(BUNDLES, inputsHash(STEP_SOURCE_DIRS, STEP_HASHED_FILES, options));
    await dropStaleBundles(dir);
    if (existsSync(join(dir, BUILD_SCRIPT))) return dir;
    const files = await Promise.all(
      options.map(async (o) => {
        const r = await build({ ...o, write: false, metafile: true });
        const outside = unhashedInputs(r.metafile, STEP_SOURCE_DIRS);
        if (outside.length)
          throw new Error(`the build step's bundle read files its key does not hash: ${outside.join(", ")}`);
        return r.outputFiles.map((f) => ({ name: f.path.slice(BUNDLES.length + 1), contents: f.contents }));
      }),
    );
    const partial = `${dir}.${process.pid}.tmp`;
    await mkdir(partial, { recursive: true });
    await Promise.all(files.flat().map((f) => writeFile(join(partial, f.name), f.contents)));
    // Another platform may have renamed its copy in first: the same inputs, so either stays.
    await rename(partial, dir).catch(() => rm(partial, { recursive: true, force: true }));
    return dir;
  })();
  bundled.catch(() => {
    bundled = undefined;
  });
  return bundled;
}

/** A CodeBuild environment variable (StartBuild's overrides, the project's variables). */
export interface BuildVariable {
  name: string;
  value: string;
  type?: string;
}

/** The variables a build may be started with: the build exchange's, which RevisionBuildStart hands the Build state. */
const BUILD_VARIABLES: ReadonlySet<string> = new Set(Object.values(BUILD_ENV));

/**
 * Refuses overrides that name any other variable, or a value that is not plain text: a caller-chosen NODE_OPTIONS
 * or PATH would run its own code in the build step, which no grant of the platform's roles allows (and which,
 * locally, would run outside any sandbox). CodeBuild's InvalidInputException.
 */
export function checkBuildOverrides(overrides: unknown): BuildVariable[] {
  const entries: { name?: unknown; value?: unknown; type?: unknown }[] = Array.isArray(overrides)
    ? overrides
    : overrides === undefined
      ? []
      : [{}];
  const refused = entries.findIndex(
    (v) =>
      typeof v?.name !== "string" ||
      !BUILD_VARIABLES.has(v.name) ||
      typeof v.value !== "string" ||
      (v.type ?? "PLAINTEXT") !== "PLAINTEXT",
  );
  if (refused < 0) return entries as BuildVariable[];
  const name = entries[refused]?.name;
  throw Object.assign(
    new Error(
      `StartBuild refused: the build takes only ${[...BUILD_VARIABLES].join(", ")}, as plain text (not ${typeof name === "string" ? name.slice(0, 64) : "a malformed override"})`,
    ),
    { code: "InvalidInputException", status: 400 },
  );
}

/**
 * The build step's environment, built from nothing as CodeBuild's is: CodeBuild's own variables, the project's,
 * the overrides (presigned URLs), the tools' basics and the operator's settings the local build reads (the data
 * folder no repository may be, the dependency cache, egress exceptions). No table, key, endpoint or credential of
 * the platform.
 */
export function localBuildEnv(
  variables: {
    codebuild?: Record<string, string>;
    project?: Record<string, string>;
    overrides?: BuildVariable[];
  },
  dataDir: string,
): Record<string, string> {
  const env: Record<string, string> = {
    ...toolEnv({}),
    PLATFORM_LOCAL: "1",
    DATA_DIR: config.dataDir,
    BUILD_CACHE_DIR: config.buildCacheDir ?? join(dataDir, "build-cache"),
    ...(config.egressAllow.length ? { EGRESS_ALLOW: config.egressAllow.join(",") } : {}),
    ...(config.text("npm_config_registry")
      ? { npm_config_registry: config.localCloud.registry as string }
      : {}),
    ...variables.codebuild,
    ...variables.project,
  };
  for (const v of variables.overrides ?? []) env[v.name] = v.value;
  return env;
}

/** Bundles of earlier code left a day ago (a platform still building from one has had time to finish). */
async function dropStaleBundles(keep: string): Promise<void> {
  const dayAgo = Date.now() - 86_400_000;
  for (const name of await readdir(BUNDLES).catch(() => [])) {
    const dir = join(BUNDLES, name);
    const made = (await stat(dir).catch(() => undefined))?.mtimeMs ?? dayAgo;
    if (dir !== keep && made < dayAgo) await rm(dir, { recursive: true, force: true });
  }
}

/** A build step running: its end (exit code, the last of its output) and a way to stop it. */
export interface RunningBuild {
  done: Promise<{ exitCode: number | null; output: string }>;
  stop(): void;
}

/** Runs the build step with `env`; its output's tail (without terminal escapes) comes with its end. */
export async function runBuildStep(id: string, env: Record<string, string>): Promise<RunningBuild> {
  const script = join(await bundleLocalBuildStep(), BUILD_SCRIPT);
  const child = spawn(process.execPath, ["--enable-source-maps", script], { cwd: ROOT, env, stdio: "pipe" });
  tolerateStdioErrors(child);
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-4000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const done = new Promise<{ exitCode: number | null; output: string }>((resolve) => {
    child.on("error", (err) => resolve({ exitCode: null, output: String(err) }));
    child.on("close", (code) => {
      // The build's output holds a repository's text: without terminal escapes in the platform's log.
      const output = tail
        .slice(-1000)
        .split("\n")
        .map((l) => cleanLine(l, 1000))
        .join("\n");
      if (code !== 0) logger.warn("local build failed", { build_id: id, exit_code: code, output });
      resolve({ exitCode: code, output });
    });
  });
  return { done, stop: () => void child.kill("SIGKILL") };
}
