import { readdir, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { BuildError } from "../errors.ts";

// Paths a repository names (graph config, graph files, .env) must stay inside the repository, both as written
// and after symlinks are followed, or a build could read the build machine's own files into an artifact.

/**
 * The repository-relative POSIX form of `rel` as seen from the repository-relative directory `fromDir`, or
 * undefined when it is absolute, holds a NUL, or climbs out of the repository with `..`.
 */
export function repoRelative(fromDir: string, rel: string): string | undefined {
  if (rel === "" || rel.includes("\0")) return undefined;
  const slashed = rel.replace(/\\/g, "/");
  if (slashed.startsWith("/") || /^[A-Za-z]:/.test(slashed)) return undefined;
  const joined = path.posix.normalize(path.posix.join(fromDir.replace(/\\/g, "/") || ".", slashed));
  if (joined === ".." || joined.startsWith("../") || joined.startsWith("/")) return undefined;
  return joined;
}

/** True when `child` is `parent` or below it (both absolute). */
export function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * True when `file` is inside a node_modules folder of a folder above `root`: the packages Node (and the reference
 * CLI) resolve for a folder without its own, such as a graph folder inside another npm package.
 */
export function inParentPackages(root: string, file: string): boolean {
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    if (isWithin(path.join(dir, "node_modules"), file)) return true;
    if (path.dirname(dir) === dir) return false;
  }
}

/** The real path of `abs` when it exists inside the real `root`; undefined when it escapes; throws ENOENT. */
export async function realInside(root: string, abs: string): Promise<string | undefined> {
  const [realRoot, real] = await Promise.all([realpath(root), realpath(abs)]);
  return isWithin(realRoot, real) ? real : undefined;
}

/**
 * Fails the build on the first symlink under `root` (`.git` aside) that leads outside it: absolute, climbing
 * out with `..`, or through other links (the kernel's resolution, not the text, decides). Links inside work.
 */
export async function checkSymlinks(root: string): Promise<void> {
  const realRoot = await realpath(root);
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const e of entries) {
    if (!e.isSymbolicLink()) continue;
    const abs = path.join(e.parentPath, e.name);
    const rel = path.relative(root, abs);
    if (rel === ".git" || rel.startsWith(`.git${path.sep}`)) continue;
    const target = await readlink(abs);
    const lexical = path.resolve(path.dirname(abs), target);
    const real = await realpath(abs).catch(() => undefined);
    const inside = path.isAbsolute(target)
      ? false
      : isWithin(path.resolve(root), lexical) && (real === undefined || isWithin(realRoot, real));
    if (!inside)
      throw new BuildError(
        `${rel.split(path.sep).join("/")} is a symlink that points outside the repository`,
      );
  }
}
