import { access, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Message } from "esbuild";
import { SANDBOX_NODE_MAJOR } from "../containment/sandbox-node.ts";
import { BuildError } from "../errors.ts";
import { isoNow } from "../time.ts";
import { cacheEntry, cacheKey, restoreModules, storeModules } from "./dep-cache.ts";
import { parseDotenv } from "./dotenv.ts";
import { type LogLine, run } from "./exec.ts";
import {
  type CorsConfig,
  checkEnvNames,
  type GraphConfig,
  graphEntryName,
  isGraphId,
  parseGraphSpec,
} from "./graph-config.ts";
import { npmSetup } from "./npm-env.ts";
import { inParentPackages, isWithin, realInside, repoRelative } from "./paths.ts";
import { type StoreIndexManifest, storeIndexEntry } from "./store-index.ts";
import { writeGraphSchemas } from "./ts-schemas.ts";
import { type BundledUi, bundleUi } from "./ui-bundle.ts";

// Install a repository's dependencies and bundle each graph into one ESM file the agent server imports.

export interface ArtifactManifest {
  graphs: Record<string, { file: string; export_name: string; description?: string }>;
  env: Record<string, string>;
  node_version?: string;
  /** langgraph.json `http.cors`: the agent server's CORS policy (shared/http/cors.ts). */
  cors?: CorsConfig;
  /** langgraph.json `auth.path`, bundled: the deployment's custom auth (shared/agent/runtime/custom-auth.ts). */
  auth?: BundledModule & { disable_studio_auth?: boolean };
  /** langgraph.json `http.app`, bundled: the deployment's custom routes (a Hono app). */
  http_app?: BundledModule;
  /** langgraph.json `checkpointer.ttl` and `store.ttl`: the runtime's defaults (agent/artifact/ttl.ts). */
  ttl?: {
    threads?: { default_ttl?: number };
    store?: { default_ttl?: number; refresh_on_read?: boolean };
  };
  /** langgraph.json `store.index`, its embeddings bundled (store-index.ts; the runtime's agent/store-index.ts). */
  store_index?: StoreIndexManifest;
  /** langgraph.json `http.html_sandbox: false`: http.app's HTML at the deployment's own origin is not sandboxed. */
  html_unsandboxed?: true;
  /** langgraph.json `http.disable_*` flags that are set: those route groups answer 404 (custom-routes.ts). */
  http?: Record<string, true>;
  /** langgraph.json `ui`, bundled for the browser: name → its files under `ui/<name>/` (ui-bundle.ts). */
  ui?: Record<string, BundledUi>;
  built_at: string;
}

/** A module of the repository bundled into the artifact, and the export the runtime takes from it. */
export interface BundledModule {
  file: string;
  export_name: string;
}

const NPM_TIMEOUT_MS = 10 * 60_000;
const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** The nearest directory from `fromDir` up to `repoDir` holding a `name` file, if any. */
async function nearest(repoDir: string, fromDir: string, name: string): Promise<string | undefined> {
  for (let dir = fromDir; isWithin(repoDir, dir); dir = path.dirname(dir)) {
    if (await exists(path.join(dir, name))) return dir;
    if (dir === repoDir || dir === path.dirname(dir)) break;
  }
  return undefined;
}

/** What the install is given besides the repository: the build's scratch folder and the deployment's secrets. */
export interface InstallOptions {
  /** The repository root (default: `dir`): .npmrc files are looked for from the package's folder up to it. */
  repoDir?: string;
  /** The build's own folder for npm's HOME, TMPDIR and config files (default: a new temporary folder). */
  scratch?: string;
  /** The deployment's secrets, read only when an .npmrc asks for a token. */
  secrets?: () => Promise<Record<string, string>>;
  /** The workspace's own folder of the dependency cache (dep-cache.ts tenantCacheDir; none: no cache). */
  cacheDir?: string;
}

/**
 * Installs dependencies where the nearest package.json is, from `dir` up to `repoDir` (default: `dir` only):
 * `npm ci` with a lockfile, else `npm install`; production dependencies only and no install scripts. npm gets
 * an environment of its own and the repository's .npmrc filtered (npmrc.ts). With BUILD_CACHE_DIR set,
 * node_modules is cached by the inputs of the install (dep-cache.ts).
 */
export async function installDependencies(
  dir: string,
  log: LogLine,
  opts: InstallOptions = {},
): Promise<void> {
  const repoDir = path.resolve(opts.repoDir ?? dir);
  const pkgDir = await nearest(repoDir, path.resolve(dir), "package.json");
  if (!pkgDir) {
    log("no package.json: graphs are bundled against the platform's own packages");
    return;
  }
  const lockName = (
    await Promise.all(
      ["package-lock.json", "npm-shrinkwrap.json"].map(async (n) =>
        (await exists(path.join(pkgDir, n))) ? n : "",
      ),
    )
  ).find(Boolean);
  const command = lockName ? "ci" : "install";
  if (!lockName && (await exists(path.join(pkgDir, "yarn.lock"))))
    log("yarn.lock is not used: installing with npm install (commit a package-lock.json for exact versions)");
  const scratch = opts.scratch ?? (await mkdtemp(path.join(tmpdir(), "npm-scratch-")));
  const cacheDir = opts.cacheDir;
  const npm = await npmSetup({
    repoDir,
    pkgDir,
    scratch,
    secrets: opts.secrets,
    log,
    ...(cacheDir ? { npmCache: path.join(cacheDir, "npm") } : {}),
  });
  try {
    const args = [command, "--no-audit", "--no-fund", "--prefer-offline", "--omit=dev", "--ignore-scripts"];
    const modules = path.join(pkgDir, "node_modules");
    const inputs = async () => ({
      command: args.join(" "),
      npmrc: npm.config,
      npmVersion: await npm.version(),
    });
    const entry = cacheDir && cacheEntry(cacheDir, await cacheKey(pkgDir, lockName, await inputs()));
    if (entry && (await restoreModules(entry, modules))) {
      log(`dependencies restored from the build cache (${path.basename(entry).slice(0, 12)})`);
      return;
    }
    log(`npm ${args.join(" ")}`);
    const started = Date.now();
    const r = await run("npm", [...args, ...npm.args], {
      cwd: pkgDir,
      env: npm.env,
      log,
      redact: npm.redact,
      timeoutMs: NPM_TIMEOUT_MS,
      tailLines: 15,
    });
    if (r.timedOut) throw new BuildError(`npm ${command} timed out after ${NPM_TIMEOUT_MS / 1000} s`);
    if (r.code !== 0)
      throw new BuildError(`npm ${command} failed (exit code ${r.code ?? "none"}):\n${r.tail.join("\n")}`);
    log(`dependencies installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (entry) await storeModules(modules, entry, log);
  } finally {
    await npm.restore();
    if (!opts.scratch) await rm(scratch, { recursive: true, force: true });
  }
}

/** The platform's own node_modules: where a repository without package.json resolves its imports from. */
async function platformNodeModules(): Promise<string | undefined> {
  const starts = [path.dirname(fileURLToPath(import.meta.url)), process.cwd()];
  for (const start of starts)
    for (let dir = start; ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, "node_modules");
      if (await exists(path.join(candidate, "@langchain", "langgraph", "package.json"))) return candidate;
      if (dir === path.dirname(dir)) break;
    }
  return undefined;
}

// CommonJS dependencies inside an ESM bundle expect require, __dirname and __filename. `require` is a name
// esbuild keeps free for this; the other two are renamed through `define` so a module's own top-level
// `const __dirname = …` cannot collide with the banner's.
const BANNER = [
  'import { createRequire as __bundle_createRequire } from "node:module";',
  'import { fileURLToPath as __bundle_fileURLToPath } from "node:url";',
  'import { dirname as __bundle_pathDirname } from "node:path";',
  "const require = __bundle_createRequire(import.meta.url);",
  "const __bundle_filename = __bundle_fileURLToPath(import.meta.url);",
  "const __bundle_dirname = __bundle_pathDirname(__bundle_filename);",
].join(" ");

function bundleFailure(err: unknown, hasPackage: boolean): BuildError {
  const errors: Message[] = (err as { errors?: Message[] }).errors ?? [];
  if (!errors.length) return new BuildError(`bundling failed: ${(err as Error).message}`);
  const lines = errors.slice(0, 10).map((m) => `${where(m)}${m.text}`);
  if (errors.length > 10) lines.push(`… and ${errors.length - 10} more errors`);
  if (!hasPackage && errors.some((m) => m.text.startsWith("Could not resolve")))
    lines.push("(the repository has no package.json: add one listing the packages the graphs import)");
  return new BuildError(`bundling failed:\n${lines.join("\n")}`);
}

const where = (m: Message) =>
  m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ` : "";

type BundleOptions = {
  repoDir: string;
  configDir: string;
  config: GraphConfig;
  outDir: string;
  log: LogLine;
};

export async function bundleGraphs(opts: BundleOptions): Promise<ArtifactManifest> {
  const { config, log } = opts;
  const repoDir = path.resolve(opts.repoDir);
  const configRel = path.relative(repoDir, path.resolve(opts.configDir)) || ".";
  const { manifest, entryPoints } = await manifestEntries(opts, repoDir, configRel);

  const configDir = path.resolve(opts.configDir);
  const hasPackage = Boolean(await nearest(repoDir, configDir, "package.json"));
  const found = hasPackage ? undefined : await platformNodeModules();
  const platformModules = found && (await realpath(found));
  if (platformModules) log("no package.json: resolving imports from the platform's packages");
  const tsconfigDir = await nearest(repoDir, configDir, "tsconfig.json");
  const tsconfig = tsconfigDir ? path.join(tsconfigDir, "tsconfig.json") : undefined;
  const nodePaths = platformModules ? [platformModules] : [];
  const realRepo = (await realInside(repoDir, repoDir))!;
  const started = Date.now();
  await mkdir(opts.outDir, { recursive: true });
  const bundling = bundleEntries({ entryPoints, outDir: opts.outDir, realRepo, nodePaths, tsconfig }).catch(
    (err: unknown) => {
      throw bundleFailure(err, hasPackage);
    },
  );
  // The graphs' schemas are read from their types (the TypeScript compiler, in this process) while esbuild
  // bundles in its own: a build takes the longer of the two, not their sum.
  const schemas = writeGraphSchemas({
    ...opts,
    repoDir,
    configDir,
    entryPoints,
    manifest,
    modules: platformModules,
  });
  const result = await bundling.catch(async (err: unknown) => {
    await schemas;
    throw err;
  });
  for (const w of result.warnings.slice(0, 20)) log(`warning: ${where(w)}${w.text}`);

  // Everything bundled comes from the repository, the platform's packages or the packages Node resolves from the
  // folders above it (a graph folder inside another package): a symlink must not pull the build machine's other
  // files into an artifact.
  const outside = (inputs: string[]) =>
    inputs.find((input) => {
      const abs = path.resolve(realRepo, input);
      return (
        ![realRepo, ...nodePaths].some((root) => isWithin(root, abs)) && !inParentPackages(realRepo, abs)
      );
    });
  const stray = outside(Object.keys(result.metafile.inputs));
  if (stray) throw new BuildError(`bundling failed: ${stray} is outside the repository`);
  // http.disable_ui: no UI routes, so nothing to bundle (and no file for GET /ui/{name}/{file} to serve).
  if (config.http?.disable_ui && config.ui) log("http.disable_ui: the ui components are not bundled");
  else if (config.ui && Object.keys(config.ui).length) {
    const ui = await bundleUi({
      realRepo,
      configRel,
      ui: config.ui,
      shared: config.ui_config?.shared,
      outDir: opts.outDir,
      nodePaths,
      tsconfig,
      log,
    });
    const strayUi = outside(ui.inputs.filter((i) => !i.startsWith("<")));
    if (strayUi) throw new BuildError(`bundling the ui failed: ${strayUi} is outside the repository`);
    manifest.ui = ui.ui;
  }
  log(
    `bundled ${Object.keys(manifest.graphs).length} graph(s)${manifest.auth ? ", auth" : ""}${manifest.http_app ? ", http.app" : ""} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );

  manifest.env = await graphEnv(config, repoDir, configRel, log);
  await schemas;
  Object.assign(manifest, manifestSettings(config));
  manifest.built_at = isoNow();
  await mkdir(opts.outDir, { recursive: true });
  await writeFile(path.join(opts.outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** The config's modules (graphs, auth, http.app, the store's embeddings) as the bundle's named entry points. */
async function manifestEntries(opts: BundleOptions, repoDir: string, configRel: string) {
  const { config } = opts;
  const entryPoints: Record<string, string> = {};
  const manifest: ArtifactManifest = { graphs: {}, env: {}, built_at: "" };
  /** A module spec of the config ("./src/file.ts:export") → an entry point of the bundle named `name`. */
  const addEntry = async (name: string, spec: string, what: string): Promise<BundledModule> => {
    const { file, exportName } = parseGraphSpec(spec);
    const rel = repoRelative(configRel, file);
    if (!rel) throw new BuildError(`${what}: ${file} is outside the repository`);
    const real = await realInside(repoDir, path.join(repoDir, rel)).catch(() => {
      throw new BuildError(`${what}: ${file} not found`);
    });
    if (!real) throw new BuildError(`${what}: ${file} points outside the repository`);
    entryPoints[name] = real;
    return { file: `${name}.mjs`, export_name: exportName };
  };
  for (const [id, spec] of Object.entries(config.graphs)) {
    if (!isGraphId(id)) throw new BuildError(`graph id ${JSON.stringify(id)} is not a valid graph id`);
    const description = config.description?.[id];
    manifest.graphs[id] = {
      ...(await addEntry(graphEntryName(id), spec, `graph ${id}`)),
      ...(description ? { description } : {}),
    };
  }
  if (config.auth?.path) {
    manifest.auth = await addEntry("auth/auth", config.auth.path, "auth.path");
    if (config.auth.disable_studio_auth) manifest.auth.disable_studio_auth = true;
  }
  if (config.http?.app) manifest.http_app = await addEntry("http/app", config.http.app, "http.app");
  if (config.http?.html_sandbox === false) manifest.html_unsandboxed = true;
  if (config.store?.index)
    manifest.store_index = await storeIndexEntry({ ...opts, index: config.store.index, addEntry });
  return { manifest, entryPoints };
}

/** esbuild over the entry points: one ESM file each for the sandbox's Node, the repository's tsconfig or none. */
function bundleEntries(o: {
  entryPoints: Record<string, string>;
  outDir: string;
  realRepo: string;
  nodePaths: string[];
  tsconfig: string | undefined;
}) {
  return build({
    entryPoints: o.entryPoints,
    outdir: o.outDir,
    outExtension: { ".js": ".mjs" },
    absWorkingDir: o.realRepo,
    bundle: true,
    platform: "node",
    format: "esm",
    target: `node${SANDBOX_NODE_MAJOR}`,
    banner: { js: BANNER },
    define: { __dirname: "__bundle_dirname", __filename: "__bundle_filename" },
    nodePaths: o.nodePaths,
    // The repository's own tsconfig (path aliases, decorators) when it has one; never one from above it.
    ...(o.tsconfig ? { tsconfig: o.tsconfig } : { tsconfigRaw: {} }),
    metafile: true,
    write: true,
    logLevel: "silent",
  });
}

/** The config's settings the runtime reads from the manifest: Node version, TTLs, CORS, disabled routes. */
function manifestSettings(config: GraphConfig): Partial<ArtifactManifest> {
  const settings: Partial<ArtifactManifest> = {};
  if (config.node_version) settings.node_version = config.node_version;
  const threadTtl = config.checkpointer?.ttl?.default_ttl;
  const storeTtl = config.store?.ttl;
  if (threadTtl || storeTtl)
    settings.ttl = {
      ...(threadTtl ? { threads: { default_ttl: threadTtl } } : {}),
      ...(storeTtl
        ? { store: { default_ttl: storeTtl.default_ttl, refresh_on_read: storeTtl.refresh_on_read } }
        : {}),
    };
  if (config.http?.cors) settings.cors = config.http.cors;
  const disabled = Object.entries(config.http ?? {}).filter(
    ([k, v]) => k.startsWith("disable_") && v === true,
  );
  if (disabled.length) settings.http = Object.fromEntries(disabled.map(([k]) => [k, true as const]));
  return settings;
}

/** The graph config's env: the object itself, or the .env file it names (skipped with a log line if absent). */
async function graphEnv(
  config: GraphConfig,
  repoDir: string,
  configRel: string,
  log: LogLine,
): Promise<Record<string, string>> {
  if (!config.env) return {};
  if (typeof config.env === "object") return { ...config.env };
  const rel = repoRelative(configRel, config.env);
  if (!rel) throw new BuildError(`env file ${config.env} is outside the repository`);
  const real = await realInside(repoDir, path.join(repoDir, rel)).catch(() => null);
  if (real === null) {
    log(
      `env file ${config.env} not found in the repository: skipped (set secrets on the deployment instead)`,
    );
    return {};
  }
  if (!real) throw new BuildError(`env file ${config.env} points outside the repository`);
  const env = parseDotenv(await readFile(real, "utf8"));
  checkEnvNames(Object.keys(env), `env file ${config.env}`);
  return env;
}
