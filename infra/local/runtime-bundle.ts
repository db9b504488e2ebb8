import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

// The agent runtime as one ESM file: a runtime runs under Node's permission model, which lets it read only
// this folder and its revision's artifact (no node_modules, no TypeScript loader starting esbuild), so the
// platform's runtime code goes in bundled. Built once per platform process, at start-up in the background.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ENTRY = join(ROOT, "infra", "local", "runtime-main.ts");

const BANNER = [
  'import { createRequire as __rt_createRequire } from "node:module";',
  "const require = __rt_createRequire(import.meta.url);",
].join(" ");

let built: Promise<{ dir: string; file: string }> | undefined;

export function bundleRuntime(dir: string): Promise<{ dir: string; file: string }> {
  built ??= (async () => {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "agent-runtime.mjs");
    await build({
      entryPoints: [ENTRY],
      outfile: file,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      banner: { js: BANNER },
      logLevel: "error",
      legalComments: "none",
    });
    return { dir, file };
  })();
  built.catch(() => {
    built = undefined;
  });
  return built;
}
