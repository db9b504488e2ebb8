import { realpath } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { config } from "../config.ts";
import { isWithin } from "./paths.ts";

// A repo_url that names a folder of the local cloud's machine: only under a folder the operator granted the
// workspace (shared/control/repo-grants.ts), compared after symlinks are resolved, and never the platform's data folder.

export const real = (p: string) => realpath(p).catch(() => p);

/** Why `dir` (a real path) overlaps the platform's data folder, or undefined. */
export async function dataDirProblem(dir: string): Promise<string | undefined> {
  const dataDir = await real(config.dataDir);
  if (isWithin(dataDir, dir) || isWithin(dir, dataDir))
    return "repo_url must not name the platform's data folder (DATA_DIR) nor a folder holding it";
  return undefined;
}

/** Why the local folder `dir` may not be built for a workspace granted `granted`, or undefined when it may. */
export async function localRepoProblem(dir: string, granted: string[]): Promise<string | undefined> {
  const [at, roots] = await Promise.all([real(dir), Promise.all(granted.map(real))]);
  const inData = await dataDirProblem(at);
  if (inData) return inData;
  if (!roots.some((root) => isWithin(root, at)))
    return "repo_url must name a folder under one the operator granted this workspace (npm run grant-folder)";
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
