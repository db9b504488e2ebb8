import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gitRepo } from "../../harness/repos.ts";
import { BuildError } from "../errors.ts";
import { GIT_OUTSIDE } from "./local-repos.ts";
import { snapshotGitRepository, snapshotRepo } from "./local-snapshot.ts";

// A local repository is cloned from a private copy whose every file was checked as it was read: whatever its .git
// says when the copy is made — a gitdir file, a link, alternates, a link among its refs — nothing outside the
// workspace's grants is read, however the folder changed since it was checked at creation.
const made: string[] = [];
const folder = (label: string) => {
  const d = realpathSync(mkdtempSync(join(tmpdir(), label)));
  made.push(d);
  return d;
};
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, stdio: "pipe" }).toString().trim();

const grant = folder("snap-grant-");
const other = folder("snap-other-");
const theirs = gitRepo({ "secret.txt": "theirs\n" }, {}, { parent: other }).dir;

/** Snapshots `dir` with `grant` granted and clones the copy: the clone's folder, or the refusal. */
async function cloneOf(dir: string): Promise<{ clone?: string; error?: unknown }> {
  const copy = folder("snap-copy-");
  try {
    await snapshotGitRepository(dir, [grant], copy);
  } catch (error) {
    return { error };
  }
  const clone = join(folder("snap-clone-"), "c");
  git(tmpdir(), "clone", "-q", `file://${snapshotRepo(copy)}`, clone);
  return { clone };
}
const refusedOutside = (r: { error?: unknown }) => {
  expect(r.error).toBeInstanceOf(BuildError);
  expect((r.error as Error).message).toBe(GIT_OUTSIDE);
};

describe("a local repository's checked copy", () => {
  it("clones as the repository: its HEAD's commit and files", async () => {
    const own = gitRepo({ "a.txt": "mine\n" }, { dev: { "b.txt": "b\n" } }, { parent: grant }).dir;
    const { clone } = await cloneOf(own);
    expect(git(clone!, "rev-parse", "HEAD")).toBe(git(own, "rev-parse", "HEAD"));
    expect(readFileSync(join(clone!, "a.txt"), "utf8")).toBe("mine\n");
    expect(git(clone!, "branch", "-r")).toMatch(/origin\/dev/);
  });

  it("a worktree under the grant clones at the worktree's HEAD", async () => {
    const own = gitRepo({ "a.txt": "main\n" }, { dev: { "a.txt": "dev\n" } }, { parent: grant }).dir;
    const tree = join(grant, `tree-${crypto.randomUUID().slice(0, 8)}`);
    git(own, "worktree", "add", "-q", tree, "dev");
    const { clone } = await cloneOf(tree);
    expect(readFileSync(join(clone!, "a.txt"), "utf8")).toBe("dev\n");
  });

  it("alternates under the grant are merged into the copy", async () => {
    const lender = gitRepo({ "a.txt": "lent\n" }, {}, { parent: grant }).dir;
    const borrower = join(grant, `borrower-${crypto.randomUUID().slice(0, 8)}`);
    git(grant, "clone", "-q", "--shared", lender, borrower);
    const { clone } = await cloneOf(borrower);
    expect(readFileSync(join(clone!, "a.txt"), "utf8")).toBe("lent\n");
  });

  it("refuses a .git that is a gitdir file or a link to another's repository", async () => {
    const viaFile = join(grant, `gitdir-${crypto.randomUUID().slice(0, 8)}`);
    mkdirSync(viaFile);
    writeFileSync(join(viaFile, ".git"), `gitdir: ${join(theirs, ".git")}\n`);
    refusedOutside(await cloneOf(viaFile));
    const viaLink = join(grant, `gitlink-${crypto.randomUUID().slice(0, 8)}`);
    mkdirSync(viaLink);
    symlinkSync(join(theirs, ".git"), join(viaLink, ".git"));
    refusedOutside(await cloneOf(viaLink));
  });

  it("refuses alternates and a ref linked into another's repository", async () => {
    const borrowing = gitRepo({ "b.txt": "b\n" }, {}, { parent: grant }).dir;
    writeFileSync(
      join(borrowing, ".git", "objects", "info", "alternates"),
      `${join(theirs, ".git", "objects")}\n`,
    );
    refusedOutside(await cloneOf(borrowing));
    const linking = gitRepo({ "b.txt": "b\n" }, {}, { parent: grant }).dir;
    symlinkSync(join(theirs, ".git", "refs", "heads", "main"), join(linking, ".git", "refs", "heads", "a"));
    refusedOutside(await cloneOf(linking));
  });

  it("keeps no config that makes git read elsewhere (include, worktree)", async () => {
    const own = gitRepo({ "a.txt": "a\n" }, {}, { parent: grant }).dir;
    writeFileSync(
      join(own, ".git", "config"),
      `${readFileSync(join(own, ".git", "config"), "utf8")}[include]\n\tpath = ${join(theirs, ".git", "config")}\n`,
    );
    const copy = folder("snap-copy-");
    await snapshotGitRepository(own, [grant], copy);
    const config = readFileSync(join(snapshotRepo(copy), "config"), "utf8");
    expect(config).not.toMatch(/include|worktree/);
    expect(config).toMatch(/bare = true/);
  });
});
