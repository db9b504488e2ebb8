import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build } from "esbuild";
import { SANDBOX_NODE_MAJOR } from "../../shared/containment/sandbox-node.ts";
import { inputsHash, unhashedInputs } from "../build/inputs-hash.ts";

// The agent runtime as one ESM file: a runtime runs under Node's permission model, which lets it read only
// this folder and its revision's artifact (no node_modules, no TypeScript loader starting esbuild), so the
// platform's runtime code goes in bundled. Built at start-up in the background into a folder named by the hash of
// its inputs (the sources, the lockfile, the options), and only when that folder is missing: platforms sharing the
// checkout share it, none rewrites a file another runs, and a start with unchanged sources bundles nothing.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ENTRY = join(ROOT, "infra", "local", "runtime-main.ts");
/** Under the checkout, outside the data folder: a sandbox's own uid reads it (shared/containment/sandbox.ts). */
export const RUNTIME_BUNDLES = join(ROOT, ".cache", "agent-runtime");
/** What the bundle may read besides node_modules (checked against esbuild's metafile when it builds). */
const SOURCE_DIRS = ["functions", "infra/local", "shared"];
const HASHED_FILES = ["package-lock.json", "tsconfig.json"];

const BANNER = [
  'import { createRequire as __rt_createRequire } from "node:module";',
  "const require = __rt_createRequire(import.meta.url);",
].join(" ");

let built: Promise<{ dir: string; file: string }> | undefined;

export function bundleRuntime(parent = RUNTIME_BUNDLES): Promise<{ dir: string; file: string }> {
  built ??= (async () => {
    const options: BuildOptions = {
      entryPoints: [ENTRY],
      absWorkingDir: ROOT,
      bundle: true,
      platform: "node",
      format: "esm",
      target: `node${SANDBOX_NODE_MAJOR}`,
      banner: { js: BANNER },
      logLevel: "error",
      legalComments: "none",
    };
    const dir = join(parent, inputsHash(SOURCE_DIRS, HASHED_FILES, options));
    const file = join(dir, "agent-runtime.mjs");
    if (existsSync(file)) return { dir, file };
    const r = await build({
      ...options,
      outfile: join(parent, "agent-runtime.mjs"),
      write: false,
      metafile: true,
    });
    const outside = unhashedInputs(r.metafile, SOURCE_DIRS);
    if (outside.length)
      throw new Error(`the runtime bundle read files its key does not hash: ${outside.join(", ")}`);
    const partial = `${dir}.${process.pid}.tmp`;
    await mkdir(partial, { recursive: true });
    await writeFile(join(partial, "agent-runtime.mjs"), r.outputFiles[0].contents);
    // Another platform may have renamed its copy in first: the same inputs, so either stays.
    await rename(partial, dir).catch(() => rm(partial, { recursive: true, force: true }));
    return { dir, file };
  })();
  built.catch(() => {
    built = undefined;
  });
  return built;
}
