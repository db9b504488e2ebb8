import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, readFile, readlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { BuildError } from "../errors.ts";
import { dataDirProblem, GIT_OUTSIDE, real } from "./local-repos.ts";
import { isWithin } from "./paths.ts";

// A local git repository is cloned from a private copy of its git data, not from its folder: each file and folder
// of that copy is opened once and the real path of what was opened (its descriptor's, /proc/self/fd) checked against
// the workspace's grants before a byte is read. Checking paths and then letting git read the same paths left a
// window in which a tenant could swap its .git (or a folder in it) for a link to another workspace's repository;
// here what is checked is what is read, and git reads only the copy, which no tenant can change.

/** The real path of an open descriptor (Linux: /proc/self/fd). */
const fdPath = (fd: number) => readlink(`/proc/self/fd/${fd}`);

interface Grants {
  roots: string[];
  /** Entries left to copy: links to folders above them could otherwise make a copy without end. */
  entries: number;
}

/** The most entries a repository's git data may hold here (a link to a folder above it multiplies them). */
const MAX_ENTRIES = 200_000;
const MAX_DEPTH = 24;

async function allowed(g: Grants, realPath: string): Promise<boolean> {
  return !(await dataDirProblem(realPath)) && g.roots.some((root) => isWithin(root, realPath));
}

/** Opens `p` (following links), refusing it unless what was opened is under a grant; its descriptor's path. */
async function openChecked(g: Grants, p: string, dir: boolean) {
  // Non-blocking: a FIFO in the folder must not hold the build (it is then skipped: not a regular file).
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (dir ? constants.O_DIRECTORY : 0);
  const handle = await open(p, flags).catch(() => undefined);
  if (!handle) return undefined;
  const at = await fdPath(handle.fd);
  if (!(await allowed(g, at))) {
    await handle.close();
    throw new BuildError(GIT_OUTSIDE);
  }
  return handle;
}

/**
 * Copies the folder at `from` into `to`, every entry opened through the descriptor of the folder it is in and
 * checked; links are followed (and checked) and copied as what they lead to. `skip` names entries left out.
 */
async function copyChecked(g: Grants, from: string, to: string, skip: (rel: string) => boolean, rel = "") {
  if (rel.split("/").length > MAX_DEPTH) throw new BuildError("repo_url's git folder is nested too deep");
  const dir = await openChecked(g, from, true);
  if (!dir) return;
  try {
    const base = `/proc/self/fd/${dir.fd}`;
    await mkdir(to, { recursive: true, mode: 0o700 });
    for (const name of await readdir(base)) {
      const childRel = rel ? `${rel}/${name}` : name;
      if (skip(childRel)) continue;
      if (--g.entries < 0) throw new BuildError("repo_url's git folder holds too many files");
      const child = path.join(base, name);
      const st = await lstat(child).catch(() => undefined);
      if (!st) continue;
      // A folder (or a link): opened as a folder first; a file otherwise.
      const asDir = await openChecked(g, child, true).catch((err) => {
        if (err instanceof BuildError) throw err;
        return undefined;
      });
      if (asDir) {
        const real = await fdPath(asDir.fd);
        await asDir.close();
        // Copied by its checked real path's descriptor again (the open above proved it a folder under a grant).
        await copyChecked(g, real, path.join(to, name), skip, childRel);
        continue;
      }
      const file = await openChecked(g, child, false);
      if (!file) continue;
      try {
        if (!(await file.stat()).isFile()) continue;
        await writeFile(path.join(to, name), await file.readFile(), { mode: 0o600 });
      } finally {
        await file.close();
      }
    }
  } finally {
    await dir.close();
  }
}

/** The git folder a working tree's .git names (a folder, a link to one, or a `gitdir:` file), or the folder itself. */
async function gitDirOf(dir: string): Promise<string> {
  const dotGit = path.join(dir, ".git");
  const st = await lstat(dotGit).catch(() => undefined);
  if (!st) return dir;
  if (st.isFile()) {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, "utf8").catch(() => ""));
    if (!m) throw new BuildError("repo_url's .git file names no git folder");
    return path.resolve(dir, m[1]);
  }
  return dotGit;
}

/** The object folders the repository's alternates add, to git's depth of 5. */
async function alternatesOf(objects: string): Promise<string[]> {
  const out: string[] = [];
  let level = [objects];
  for (let depth = 0; depth < 6 && level.length; depth++) {
    const next: string[] = [];
    for (const o of level) {
      const text = await readFile(path.join(o, "info", "alternates"), "utf8").catch(() => "");
      for (const l of text.split("\n").map((x) => x.trim()))
        if (l && !l.startsWith("#")) next.push(l.startsWith('"') ? path.parse(o).root : path.resolve(o, l));
    }
    out.push(...next);
    level = next;
  }
  return out;
}

/**
 * A self-contained bare copy of the repository at `dir` in `into` (a private folder): its HEAD, refs and objects
 * (a worktree's HEAD with its common folder's refs and objects; alternates' objects merged in), every file read
 * checked against `granted`; its config reduced to the repository format (no include, no worktree, no hooks).
 * Refused with GIT_OUTSIDE when anything it reads lies outside the grants.
 */
export async function snapshotGitRepository(dir: string, granted: string[], into: string): Promise<void> {
  const g: Grants = { roots: await Promise.all(granted.map(real)), entries: MAX_ENTRIES };
  const gitDir = await gitDirOf(dir);
  const staged = path.join(into, "staged");
  // The git folder itself (a worktree's: its HEAD and commondir), then the common folder it names.
  await copyChecked(g, gitDir, staged, (rel) => !["HEAD", "commondir"].includes(rel.split("/")[0]));
  const common = (await readFile(path.join(staged, "commondir"), "utf8").catch(() => "")).trim();
  const commonDir = common ? path.resolve(gitDir, common) : gitDir;
  const keep = new Set(["HEAD", "refs", "packed-refs", "objects", "config", "shallow"]);
  const repo = path.join(into, "repo.git");
  await copyChecked(g, commonDir, repo, (rel) => !keep.has(rel.split("/")[0]));
  // A worktree's HEAD is its own.
  const head = await readFile(path.join(staged, "HEAD")).catch(() => undefined);
  if (head) await writeFile(path.join(repo, "HEAD"), head, { mode: 0o600 });
  // Where they are is read from the repository (what is copied from there is checked as it is read).
  for (const alternate of await alternatesOf(path.join(commonDir, "objects")))
    await copyChecked(g, alternate, path.join(repo, "objects"), (rel) => rel.startsWith("info"));
  await writeFile(path.join(repo, "objects", "info", "alternates"), "", { mode: 0o600 }).catch(
    () => undefined,
  );
  const config = await readFile(path.join(repo, "config"), "utf8").catch(() => "");
  const format = /^\s*objectformat\s*=\s*(sha1|sha256)\s*$/im.exec(config)?.[1];
  const version = format === "sha256" ? 1 : 0;
  await writeFile(
    path.join(repo, "config"),
    `[core]\n\trepositoryformatversion = ${version}\n\tbare = true\n${format === "sha256" ? "[extensions]\n\tobjectformat = sha256\n" : ""}`,
    { mode: 0o600 },
  );
}

/** The bare copy's folder under `into`. */
export const snapshotRepo = (into: string) => path.join(into, "repo.git");
