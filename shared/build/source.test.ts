import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BuildError } from "../errors.ts";
import { fetchSource } from "./source.ts";

let tmp: string;
let repo: string;
let mainSha: string;
let featureSha: string;
let n = 0;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  })
    .toString()
    .trim();

/** A fresh destination directory and a log that remembers its lines. */
const target = () => {
  const lines: string[] = [];
  return { dest: path.join(tmp, `dest-${++n}`), lines, log: (l: string) => lines.push(l) };
};

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "source-test-"));
  // The repositories of these tests are granted where they are made (localRoots); the data folder is set apart.
  vi.stubEnv("DATA_DIR", path.join(tmp, "data"));
  repo = path.join(tmp, "repo");
  await mkdir(repo);
  git(repo, "init", "--quiet", "-b", "main");
  await writeFile(path.join(repo, "a.txt"), "one");
  git(repo, "add", ".");
  git(repo, "commit", "--quiet", "-m", "one");
  mainSha = git(repo, "rev-parse", "HEAD");
  git(repo, "checkout", "--quiet", "-b", "feature");
  await writeFile(path.join(repo, "a.txt"), "two");
  git(repo, "commit", "--quiet", "-am", "two");
  featureSha = git(repo, "rev-parse", "HEAD");
  git(repo, "tag", "v1");
  git(repo, "checkout", "--quiet", "main");
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(tmp, { recursive: true, force: true });
});

const fileUrl = () => pathToFileURL(repo).href;
const content = (dest: string) => readFile(path.join(dest, "a.txt"), "utf8");

describe("local git repositories (local cloud)", () => {
  it("clones the default branch of a file:// URL and returns its commit", async () => {
    const t = target();
    const r = await fetchSource({
      repoUrl: fileUrl(),
      dest: t.dest,
      allowLocal: true,
      localRoots: [tmp],
      log: t.log,
    });
    expect(r.commit).toBe(mainSha);
    expect(await content(t.dest)).toBe("one");
  });

  it("honours a branch, a tag, a full commit sha and a short one", async () => {
    for (const [ref, sha, text] of [
      ["feature", featureSha, "two"],
      ["v1", featureSha, "two"],
      ["main", mainSha, "one"],
      [mainSha, mainSha, "one"],
      [featureSha.slice(0, 10), featureSha, "two"],
    ]) {
      const t = target();
      const r = await fetchSource({
        repoUrl: repo,
        ref,
        dest: t.dest,
        allowLocal: true,
        localRoots: [tmp],
        log: t.log,
      });
      expect(r.commit, ref).toBe(sha);
      expect(await content(t.dest), ref).toBe(text);
    }
  });

  it("a ref that does not exist is a BuildError naming the ref and the repository", async () => {
    for (const ref of ["nope", "cafe1234"]) {
      const t = target();
      const err = await fetchSource({
        repoUrl: fileUrl(),
        ref,
        dest: t.dest,
        allowLocal: true,
        localRoots: [tmp],
        log: t.log,
      }).catch((e) => e);
      expect(err).toBeInstanceOf(BuildError);
      expect(err.message).toBe(`ref ${ref} not found in ${fileUrl()}`);
    }
  });

  it("a ref git could read as an option is refused before git runs", async () => {
    const t = target();
    const err = await fetchSource({
      repoUrl: repo,
      ref: "--upload-pack=touch /tmp/x",
      dest: t.dest,
      allowLocal: true,
      localRoots: [tmp],
      log: t.log,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(BuildError);
    expect(t.lines).toEqual([]);
  });
});

describe("plain directories (local cloud)", () => {
  it("copies the directory without .git and node_modules, and ignores a ref with a log line", async () => {
    const dir = path.join(tmp, "plain");
    await mkdir(path.join(dir, "node_modules", "x"), { recursive: true });
    await mkdir(path.join(dir, "vendored", ".git"), { recursive: true });
    await writeFile(path.join(dir, "vendored", ".git", "config"), "");
    await mkdir(path.join(dir, "src"), { recursive: true });
    await writeFile(path.join(dir, "src", "g.ts"), "export const graph = 1;");
    await writeFile(path.join(dir, "node_modules", "x", "index.js"), "");
    const t = target();
    const r = await fetchSource({
      repoUrl: dir,
      ref: "main",
      dest: t.dest,
      allowLocal: true,
      localRoots: [tmp],
      log: t.log,
    });
    expect(r.commit).toBeUndefined();
    expect(await readFile(path.join(t.dest, "src", "g.ts"), "utf8")).toContain("graph");
    expect(existsSync(path.join(t.dest, "node_modules"))).toBe(false);
    expect(existsSync(path.join(t.dest, "vendored", ".git"))).toBe(false);
    expect(t.lines.join("\n")).toMatch(/ref main ignored/);
  });

  it("a missing local path is a BuildError", async () => {
    const t = target();
    await expect(
      fetchSource({
        repoUrl: path.join(tmp, "missing"),
        dest: t.dest,
        allowLocal: true,
        localRoots: [tmp],
        log: t.log,
      }),
    ).rejects.toThrow(BuildError);
  });
});

describe("what is refused", () => {
  it("a local path outside the workspace's granted folders, or reaching out through a symlink, fails the build saying why", async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), "source-outside-"));
    try {
      await writeFile(path.join(outside, "a.txt"), "x");
      const link = path.join(tmp, `to-outside-${++n}`);
      await symlink(outside, link);
      for (const repoUrl of [outside, pathToFileURL(outside).href, link]) {
        const t = target();
        await expect(
          fetchSource({ repoUrl, dest: t.dest, allowLocal: true, localRoots: [tmp], log: t.log }),
        ).rejects.toThrow(/under one the operator granted this workspace \(npm run grant-folder\)/);
      }
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("the platform's data folder, or a folder holding it, is refused even under a root", async () => {
    await mkdir(path.join(tmp, "data", "s3"), { recursive: true });
    for (const repoUrl of [path.join(tmp, "data"), path.join(tmp, "data", "s3"), tmp]) {
      const t = target();
      await expect(
        fetchSource({ repoUrl, dest: t.dest, allowLocal: true, localRoots: [tmp], log: t.log }),
      ).rejects.toThrow(/must not name the platform's data folder \(DATA_DIR\)/);
    }
  });

  it("a source holding a symlink that leads outside it, once fetched, before anything reads it", async () => {
    const dir = path.join(tmp, `linked-${++n}`);
    await mkdir(dir);
    await symlink("/etc/hostname", path.join(dir, "package.json"));
    const t = target();
    await expect(
      fetchSource({ repoUrl: dir, dest: t.dest, allowLocal: true, localRoots: [tmp], log: t.log }),
    ).rejects.toThrow(new BuildError("package.json is a symlink that points outside the repository"));
  });

  it.each([
    ["a local path outside the local cloud", () => repo],
    ["a file:// URL outside the local cloud", () => pathToFileURL(repo).href],
    ["http:// outside the local cloud", () => "http://example.com/org/repo.git"],
    ["ssh://", () => "ssh://git@example.com/org/repo.git"],
    ["scp-like ssh", () => "git@github.com:org/repo.git"],
    ["credentials in the URL", () => "https://x-access-token:abc123@github.com/org/repo.git"],
    ["a loopback host outside the local cloud", () => "https://127.0.0.1/org/repo.git"],
    ["an internal host name outside the local cloud", () => "https://localhost/org/repo.git"],
  ])("%s → BuildError", async (_name, url) => {
    const t = target();
    const err = await fetchSource({ repoUrl: url(), dest: t.dest, allowLocal: false, log: t.log }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(BuildError);
    expect(err.message).not.toContain("abc123");
  });
});

describe("https with a token", () => {
  it("the token goes to the repository's host as a Basic authorization header; git never prompts", async () => {
    const seen: (string | undefined)[] = [];
    const server = createHttpServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' }).end();
    });
    const port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
    );
    const token = "ghp_HeaderT0kenValue0987654321";
    const t = target();
    try {
      const err = await fetchSource({
        repoUrl: `http://127.0.0.1:${port}/org/repo.git`,
        token,
        dest: t.dest,
        allowLocal: true,
        localRoots: [tmp],
        log: t.log,
      }).catch((e) => e);
      expect(err).toBeInstanceOf(BuildError);
      expect(err.message).toMatch(/refused access \(the token was not accepted\)/);
      expect(seen[0]).toBe(`Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`);
      for (const text of [err.message, ...t.lines]) expect(text).not.toContain(token);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("a failing clone is a BuildError with git's message; the token is in neither the message nor the log", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const token = "ghp_S3cretT0kenValue1234567890";
    const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
    const t = target();
    const err = await fetchSource({
      repoUrl: `https://127.0.0.1:${port}/org/repo.git`,
      ref: "main",
      token,
      dest: t.dest,
      allowLocal: true,
      localRoots: [tmp],
      log: t.log,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(BuildError);
    expect(err.message).toMatch(/git clone failed: .*127\.0\.0\.1/);
    for (const text of [err.message, ...t.lines]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(basic);
    }
  });
});
