import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Metafile } from "esbuild";

// Builds cached by their inputs (the platform's function bundles, the agent runtime's bundle, the local build
// step's): a folder named by the hash of the sources a build may read, the lockfile and its settings, built only
// when missing. esbuild's metafile says what a build read; a file outside the hashed folders fails the build.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The key of a build cached by its inputs: every file under `dirs` and each of `files` (paths in the checkout),
 * with `settings` (entries, options). Hashing the sources costs a fraction of bundling them again.
 */
export function inputsHash(dirs: readonly string[], files: readonly string[], settings: unknown): string {
  const h = createHash("sha256");
  h.update(JSON.stringify(settings));
  for (const file of [
    ...dirs.flatMap((d) => filesUnder(join(ROOT, d))),
    ...files.map((f) => join(ROOT, f)),
  ]) {
    h.update(relative(ROOT, file));
    h.update(readFileSync(file));
  }
  return h.digest("hex").slice(0, 16);
}

/** The files a build read (its metafile's inputs) outside `dirs` and node_modules: what its key would not see. */
export function unhashedInputs(meta: Pick<Metafile, "inputs">, dirs: readonly string[]): string[] {
  return Object.keys(meta.inputs).filter(
    (i) => !i.startsWith("node_modules/") && !dirs.some((d) => i.startsWith(`${d}/`)),
  );
}

/** Every file under `dir`, sorted. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}
