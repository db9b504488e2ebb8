import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuildOptions } from "esbuild";

// The build step as the files it runs from, for CodeBuild (infra/stacks/revision-build.ts) and the local
// CodeBuild (infra/local/codebuild.ts) alike: the same bundles run in both, with no TypeScript loader at start.
const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** The bundled build step. */
export const BUILD_SCRIPT = "revision-build.mjs";
/** Its untrusted part, started by the build step as a process of its own (shared/build/source-build-process.ts). */
export const SOURCE_SCRIPT = "build-source.mjs";

/** Each entry and the file it is bundled to. */
export const BUILD_STEP_ENTRIES = [
  [join(ROOT, "infra", "build", "revision-build.ts"), BUILD_SCRIPT],
  [join(ROOT, "infra", "build", "build-source.ts"), SOURCE_SCRIPT],
] as const;

/**
 * esbuild's options for one entry: one ESM file for Node 20. esbuild and TypeScript stay packages: each finds
 * its native binary from its own package's folder (bundled, TypeScript looked for package.json beside the bundle).
 */
export function stepBundleOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    mainFields: ["module", "main"],
    external: ["esbuild", "typescript", "@typescript/*"],
    minify: true,
    sourcemap: true,
    logLevel: "warning",
    // Bundled CommonJS dependencies still call require(); give ESM output one.
    banner: { js: "import { createRequire } from 'module';const require = createRequire(import.meta.url);" },
  };
}
