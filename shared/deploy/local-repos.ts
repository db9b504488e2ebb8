import { realpath } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { config } from "../config.ts";
import { isWithin } from "./paths.ts";

// A repo_url that names a folder of the local cloud's machine: only under the roots the operator lists
// (LOCAL_REPO_ROOTS), compared after symlinks are resolved, and never the platform's data folder.

const real = (p: string) => realpath(p).catch(() => p);

/** Why the local folder `dir` may not be built, or undefined when it may. */
export async function localRepoProblem(dir: string): Promise<string | undefined> {
  const [at, dataDir, roots] = await Promise.all([
    real(dir),
    real(config.dataDir),
    Promise.all(config.localRepoRoots.map(real)),
  ]);
  if (isWithin(dataDir, at) || isWithin(at, dataDir))
    return "repo_url must not name the platform's data folder (DATA_DIR) nor a folder holding it";
  if (!roots.some((root) => isWithin(root, at)))
    return "repo_url must name a folder under the roots the operator allows for local repositories (LOCAL_REPO_ROOTS)";
  return undefined;
}

/** The folder a local repo_url names (a file:// URL or a path), or undefined for any other form. */
export function localRepoPath(repoUrl: string): string | undefined {
  const url = repoUrl.trim();
  if (/^file:\/\//i.test(url)) {
    try {
      return fileURLToPath(new URL(url));
    } catch {
      return undefined;
    }
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(url) || /^[\w.-]+@[\w.-]+:/.test(url)) return undefined;
  return path.resolve(url);
}
