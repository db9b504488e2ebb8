import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { config } from "../config.ts";
import { isWithin } from "./paths.ts";

// A repo_url that names a folder of the local cloud's machine: only under a folder the operator granted the
// workspace (shared/control/repo-grants.ts), compared after symlinks are resolved, and never the platform's data folder.
// A git repository there is read by git from wherever its .git says (a `gitdir:` file, a link, a worktree's common
// folder, alternates, links inside): each of those must be under a grant too, or a clone reads another's repository.

export const real = (p: string) => realpath(p).catch(() => p);

/** Why `dir` (a real path) overlaps the platform's data folder, or undefined. */
export async function dataDirProblem(dir: string): Promise<string | undefined> {
  const dataDir = await real(config.dataDir);
  if (isWithin(dataDir, dir) || isWithin(dir, dataDir))
    return "repo_url must not name the platform's data folder (DATA_DIR) nor a folder holding it";
  return undefined;
}

const NOT_GRANTED =
  "repo_url must name a folder under one the operator granted this workspace (npm run grant-folder)";
export const GIT_OUTSIDE =
  "repo_url's git repository reads files outside the folders the operator granted this workspace (its .git, a worktree's common folder, alternates or a link inside lead there)";

/** Why the local folder `dir` may not be built for a workspace granted `granted`, or undefined when it may. */
export async function localRepoProblem(dir: string, granted: string[]): Promise<string | undefined> {
  const [at, roots] = await Promise.all([real(dir), Promise.all(granted.map(real))]);
  const inData = await dataDirProblem(at);
  if (inData) return inData;
  const allowed = async (p: string) => {
    const r = await real(p);
    return !(await dataDirProblem(r)) && roots.some((root) => isWithin(root, r));
  };
  if (!(await allowed(at))) return NOT_GRANTED;
  for (const gitDir of await gitDirs(at)) {
    if (!(await allowed(gitDir))) return GIT_OUTSIDE;
    for (const link of await linksIn(gitDir)) if (!(await allowed(link))) return GIT_OUTSIDE;
  }
  return undefined;
}

const isFile = (p: string) =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  );
const text = (p: string) => readFile(p, "utf8").catch(() => undefined);

/**
 * The folders git reads when it clones the repository at `dir`: its git folder (`.git` as a folder, a link or a
 * `gitdir:` file; `dir` itself when bare), the common folder a worktree's names and the object folders alternates
 * add (to git's depth of 5). Empty for a folder that is no repository.
 */
async function gitDirs(dir: string): Promise<string[]> {
  const dotGit = path.join(dir, ".git");
  let gitDir: string | undefined;
  if (await isFile(dotGit)) {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec((await text(dotGit)) ?? "");
    gitDir = m ? path.resolve(dir, m[1]) : undefined;
  } else if (await lstat(dotGit).catch(() => undefined)) gitDir = dotGit;
  else if (await lstat(path.join(dir, "HEAD")).catch(() => undefined)) gitDir = dir;
  if (!gitDir) return [];
  const out = [gitDir];
  const common = (await text(path.join(gitDir, "commondir")))?.trim();
  const commonDir = common ? path.resolve(gitDir, common) : gitDir;
  if (commonDir !== gitDir) out.push(commonDir);
  let objects = [path.join(commonDir, "objects")];
  for (let depth = 0; depth < 6 && objects.length; depth++) {
    const next: string[] = [];
    for (const o of objects) {
      const lines = ((await text(path.join(o, "info", "alternates"))) ?? "").split("\n");
      // A quoted line is C-escaped (git unquotes it): read as the root, which no grant but "/" holds.
      for (const l of lines.map((x) => x.trim()).filter((x) => x && !x.startsWith("#")))
        next.push(l.startsWith('"') ? path.parse(o).root : path.resolve(o, l));
    }
    out.push(...next);
    objects = next;
  }
  return out;
}

/** The symlinks under a git folder (refs, objects, packed-refs… could each lead elsewhere). */
async function linksIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isSymbolicLink()).map((e) => path.join(e.parentPath, e.name));
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
