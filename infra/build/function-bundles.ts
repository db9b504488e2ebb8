import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, buildSync, type Metafile } from "esbuild";
import {
  AGENT_ENTRY_POINTS,
  type Group,
  type Route,
  routeId,
  routes,
  servedByRuntime,
} from "../../functions/routes.ts";
import { tasks } from "../../functions/task-manifest.ts";
import { processEnvironment } from "../../shared/config.ts";
import { filesUnder, inputsHash, unhashedInputs } from "./inputs-hash.ts";

// Every platform Lambda's bundle, built by one esbuild call with one set of options into a folder named by the
// hash of its inputs: the CDK app deploys these folders as they are, so what runs in AWS is byte for byte what
// the local cloud can run. Rebuilt only when a source, the lockfile or the options change.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BUNDLE_CACHE = join(ROOT, ".cache", "bundles");
/** The folders whose files a bundle may read (checked against esbuild's metafile after each build). */
const SOURCE_DIRS = ["functions", "shared"];
const HASHED_FILES = [
  "package-lock.json",
  "tsconfig.json",
  "infra/build/function-bundles.ts",
  "infra/build/openapi-document.ts",
];
/** An OpenAPI document beside the bundle of the function that serves it (functions/system/openapi.ts, functions/agent/system/openapi.ts). */
const OPENAPI_DOCUMENT_FILE = "openapi.json";

/**
 * The options every bundle is built with (what infra/stacks/node-function.ts gave NodejsFunction). No source
 * maps: with --enable-source-maps a minified bundle's map cost hundreds of MB of RSS at load, and they count
 * toward the 250 MB unzipped limit (the README's performance section has the figures).
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  minify: true,
  sourcemap: false,
  mainFields: ["module", "main"],
  outExtension: { ".js": ".mjs" },
  // Bundled CommonJS dependencies still call require(); give ESM output one.
  banner: { js: "import { createRequire } from 'module';const require = createRequire(import.meta.url);" },
  // Each function's bootstrap: its configuration parsed once, at init (functions/bootstrap.ts).
  inject: ["functions/bootstrap.ts"],
  logLevel: "error",
} as const satisfies BuildOptions;

/** The file each function runs: `<bundle dir>/index.mjs`, exporting `handler`. */
const BUNDLE_FILE = "index.mjs";
/** The runtime layer's folder inside its bundle dir: Lambda mounts a layer at /opt, so /opt/nodejs/agent-runtime.mjs. */
export const RUNTIME_LAYER_FILE = join("nodejs", "agent-runtime.mjs");

export type FunctionKind = "route" | "router" | "task" | "runtime";

/** A Lambda the platform deploys, as the CDK app configures it. */
export interface PlatformFunction {
  /** The CDK construct id (a route's routeId, AgentRouter, Task-<name>, AgentRuntime). */
  id: string;
  kind: FunctionKind;
  /** API group of a route's function or the router. */
  group?: Group;
  /** Module under functions/ (without .ts) exporting `handler`. */
  handler: string;
  memoryMb: number;
  timeoutSeconds: number;
  /** What the CDK app sets for this function beyond the shared resource names (both it and the local cloud read it). */
  environment: Record<string, string>;
  /**
   * Its invocations are held open: a response stream (streamed routes, the router, the runtime) or a long-poll.
   * The local Lambda never queues them behind one another (infra/local/function-host.ts).
   */
  heldOpen?: boolean;
}

/** The memory of a function that names none (AWS's default is 128 MB; every platform function gets this). */
export const DEFAULT_MEMORY_MB = 512;
/** A synchronous API function's timeout: API Gateway's integration timeout is 29 s. */
export const API_TIMEOUT_SECONDS = 29;
/** A stream (and the router that carries streams) lasts up to the 15 minutes a Lambda may run. */
export const STREAM_TIMEOUT_SECONDS = 900;
/** Each deployment's runtime function (shared/agent/hosting/lambda-host.ts CreateFunction). */
export const RUNTIME_MEMORY_MB = 1024;

/** A route function's own environment: a streaming route's answer is response-streamed (shared/http/lambda-front.ts). */
export const routeEnvironment = (r: Pick<Route, "stream">): Record<string, string> =>
  r.stream ? { LAMBDA_RESPONSE_STREAMING: "1" } : {};

/** Every Lambda of the platform: one per route not served by a runtime, the router, each task, the runtime. */
export function platformFunctions(): PlatformFunction[] {
  return [
    ...routes
      .filter((r) => !servedByRuntime(r))
      .map((r) => ({
        id: routeId(r),
        kind: "route" as const,
        group: r.group,
        handler: r.handler,
        memoryMb: DEFAULT_MEMORY_MB,
        timeoutSeconds: r.stream ? STREAM_TIMEOUT_SECONDS : API_TIMEOUT_SECONDS,
        environment: routeEnvironment(r),
        ...(r.stream || r.longPoll ? { heldOpen: true } : {}),
      })),
    {
      id: "AgentRouter",
      kind: "router",
      group: "agent",
      handler: AGENT_ENTRY_POINTS.router,
      memoryMb: DEFAULT_MEMORY_MB,
      timeoutSeconds: STREAM_TIMEOUT_SECONDS,
      environment: {},
      heldOpen: true,
    },
    ...tasks.map((t) => ({
      id: `Task-${t.name}`,
      kind: "task" as const,
      handler: t.handler,
      memoryMb: t.memoryMb ?? DEFAULT_MEMORY_MB,
      timeoutSeconds: t.timeoutSeconds,
      environment: {},
    })),
    {
      id: "AgentRuntime",
      kind: "runtime",
      handler: AGENT_ENTRY_POINTS.runtime,
      memoryMb: RUNTIME_MEMORY_MB,
      timeoutSeconds: STREAM_TIMEOUT_SECONDS,
      environment: {},
      heldOpen: true,
    },
  ];
}

/** A bundle's folder name: one per handler module, flat (no folder inside another's asset). */
const bundleName = (handler: string) => handler.replaceAll("/", ".");
/** The runtime ships as a layer, whose files sit under nodejs/. */
const entryName = (f: Pick<PlatformFunction, "kind" | "handler">) =>
  f.kind === "runtime"
    ? join(bundleName(f.handler), RUNTIME_LAYER_FILE).replace(/\.mjs$/, "")
    : join(bundleName(f.handler), BUNDLE_FILE).replace(/\.mjs$/, "");

/** The bytes of every file under `dir`: a function's code unzipped, as Lambda counts it. */
export function dirBytes(dir: string): number {
  return filesUnder(dir).reduce((n, f) => n + statSync(f).size, 0);
}

/** The hash of everything a build depends on: the sources, the lockfile, the entries and the options. */
export function bundleInputsHash(fns: PlatformFunction[] = platformFunctions()): string {
  return inputsHash(SOURCE_DIRS, HASHED_FILES, { options: BUNDLE_OPTIONS, entries: fns.map(entryName) });
}

/** One built bundle: where it is and what esbuild put in it. */
export interface Bundle {
  handler: string;
  /** The folder the CDK app deploys (the function's code, or the layer's content). */
  dir: string;
  /** The module Lambda loads. */
  file: string;
  /** The files (sources and packages, paths relative to the repository) esbuild put in the bundle. */
  inputs: string[];
}

export interface BundleSet {
  hash: string;
  dir: string;
  /** By handler module. */
  bundles: Map<string, Bundle>;
}

const META = "meta.json";
let memo: BundleSet | undefined;

/**
 * The bundles of every platform function, built when their inputs changed since the last build (synchronous:
 * the CDK app asks for them while it constructs its stacks). Older builds are removed. `recheck`: hash the
 * sources again (a long-lived process whose sources may have changed).
 */
export function ensureBundles({ recheck = false } = {}): BundleSet {
  // Hashing the sources takes ~0.3 s; a synth asks once per function, so one process checks once unless told.
  if (memo && !recheck) return memo;
  const fns = platformFunctions();
  const hash = bundleInputsHash(fns);
  if (memo?.hash === hash) return memo;
  const dir = join(BUNDLE_CACHE, hash);
  if (!existsSync(join(dir, META))) {
    // The first start (or synth) after a change of the functions' sources waits for this, a minute or less.
    process.stderr.write(`Building the ${fns.length} platform function bundles (their sources changed)…\n`);
    build(fns, dir);
  }
  const meta = JSON.parse(readFileSync(join(dir, META), "utf8")) as Metafile;
  const bundles = new Map<string, Bundle>();
  for (const f of fns) {
    const name = entryName(f);
    const out = meta.outputs[relative(ROOT, join(dir, `${name}.mjs`))];
    if (!out) throw new Error(`bundle ${name}.mjs is missing from ${dir}`);
    bundles.set(f.handler, {
      handler: f.handler,
      dir: join(dir, bundleName(f.handler)),
      file: join(dir, `${name}.mjs`),
      inputs: Object.keys(out.inputs),
    });
  }
  memo = { hash, dir, bundles };
  return memo;
}

function build(fns: PlatformFunction[], dir: string): void {
  mkdirSync(BUNDLE_CACHE, { recursive: true });
  // Built beside its final place and renamed into it: a concurrent build (another test file) finds a whole one.
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const entryPoints = Object.fromEntries(
    fns.map((f) => [entryName(f), join(ROOT, "functions", `${f.handler}.ts`)]),
  );
  const result = buildSync({
    ...BUNDLE_OPTIONS,
    mainFields: [...BUNDLE_OPTIONS.mainFields],
    inject: [...BUNDLE_OPTIONS.inject],
    entryPoints,
    outdir: tmp,
    absWorkingDir: ROOT,
    metafile: true,
  });
  const meta = result.metafile!;
  // The platform API's OpenAPI document, beside the function that serves it (made from the sources bundled here).
  const served = fns.find((f) => f.handler === "system/openapi");
  const agentServed = fns.find((f) => f.handler === "agent/system/openapi");
  if (served || agentServed) {
    const made = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "infra/build/openapi-document.ts"),
        served ? join(tmp, bundleName(served.handler), OPENAPI_DOCUMENT_FILE) : "-",
        ...(agentServed ? [join(tmp, bundleName(agentServed.handler), OPENAPI_DOCUMENT_FILE)] : []),
      ],
      {
        cwd: ROOT,
        stdio: ["ignore", "inherit", "inherit"],
        env: { ...processEnvironment(), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
      },
    );
    if (made.status !== 0) throw new Error(`making the OpenAPI document failed (exit ${made.status})`);
  }
  const outside = unhashedInputs(meta, SOURCE_DIRS);
  if (outside.length)
    throw new Error(`bundles read files the cache key does not hash: ${outside.slice(0, 5).join(", ")}`);
  // The metafile names outputs by the folder they were built in; record them under the final one.
  const renamed: Metafile = {
    inputs: meta.inputs,
    outputs: Object.fromEntries(
      Object.entries(meta.outputs).map(([k, v]) => [
        relative(ROOT, join(dir, relative(tmp, join(ROOT, k)))),
        v,
      ]),
    ),
  };
  writeFileSync(join(tmp, META), JSON.stringify(renamed));
  try {
    renameSync(tmp, dir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(dir, META))) throw err;
  }
  for (const old of readdirSync(BUNDLE_CACHE))
    if (old !== bundleFolder(dir) && !old.includes(".tmp-"))
      rmSync(join(BUNDLE_CACHE, old), { recursive: true, force: true });
}

const bundleFolder = (dir: string) => relative(BUNDLE_CACHE, dir);

/** A function's bundle: its folder, the module Lambda loads, its memory and timeout (for the local cloud). */
export interface FunctionBundle extends PlatformFunction {
  dir: string;
  file: string;
}

/** Every platform function with its bundle, built if needed. */
export function functionBundles(): FunctionBundle[] {
  const { bundles } = ensureBundles();
  return platformFunctions().map((f) => {
    const b = bundles.get(f.handler)!;
    return { ...f, dir: b.dir, file: b.file };
  });
}

/** The bundle of one handler module (functions/<handler>.ts). */
export function bundleOf(handler: string): Bundle {
  const b = ensureBundles().bundles.get(handler);
  if (!b) throw new Error(`functions/${handler}.ts is no platform function's entry`);
  return b;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const { dir, bundles } = ensureBundles();
  console.log(`${bundles.size} function bundles in ${dir} (${Math.round(performance.now() - started)} ms)`);
}
