import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { SANDBOX_NODE_MAJOR } from "../../shared/containment/sandbox-node.ts";

// The agent runtime as one ESM file: a runtime runs under Node's permission model, which lets it read only
// this folder and its revision's artifact (no node_modules, no TypeScript loader starting esbuild), so the
// platform's runtime code goes in bundled. Built once per platform process, at start-up in the background, into
// a folder named by its content (platforms sharing the checkout share it; none rewrites a file another runs).
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ENTRY = join(ROOT, "infra", "local", "runtime-main.ts");
/** Under the checkout, outside the data folder: a sandbox's own uid reads it (shared/containment/sandbox.ts). */
export const RUNTIME_BUNDLES = join(ROOT, ".cache", "agent-runtime");

const BANNER = [
  'import { createRequire as __rt_createRequire } from "node:module";',
  "const require = __rt_createRequire(import.meta.url);",
].join(" ");

let built: Promise<{ dir: string; file: string }> | undefined;

export function bundleRuntime(parent = RUNTIME_BUNDLES): Promise<{ dir: string; file: string }> {
  built ??= (async () => {
    const r = await build({
      entryPoints: [ENTRY],
      outfile: join(parent, "agent-runtime.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: `node${SANDBOX_NODE_MAJOR}`,
      banner: { js: BANNER },
      logLevel: "error",
      legalComments: "none",
      write: false,
    });
    const code = r.outputFiles[0].contents;
    const dir = join(parent, createHash("sha256").update(code).digest("hex").slice(0, 16));
    const file = join(dir, "agent-runtime.mjs");
    if (existsSync(file)) return { dir, file };
    const partial = `${dir}.${process.pid}.tmp`;
    await mkdir(partial, { recursive: true });
    await writeFile(join(partial, "agent-runtime.mjs"), code);
    // Another platform may have renamed its copy in first: the same content, so either stays.
    await rename(partial, dir).catch(() => rm(partial, { recursive: true, force: true }));
    return { dir, file };
  })();
  built.catch(() => {
    built = undefined;
  });
  return built;
}
