import { realpath } from "node:fs/promises";
import path from "node:path";

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

/** The real path of `abs` when it exists inside the real `root`; undefined when it escapes; throws ENOENT. */
export async function realInside(root: string, abs: string): Promise<string | undefined> {
  const [realRoot, real] = await Promise.all([realpath(root), realpath(abs)]);
  return isWithin(realRoot, real) ? real : undefined;
}
