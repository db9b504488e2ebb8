import { cp, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { endpointProblem } from "../containment/ssrf.ts";
import { BuildError } from "../errors.ts";
import { type LogLine, redactor, run, toolEnv } from "./exec.ts";
import { localRepoProblem } from "./local-repos.ts";
import { snapshotGitRepository, snapshotRepo } from "./local-snapshot.ts";
import { checkSymlinks } from "./paths.ts";

// Fetches a revision's source into `dest`: an https git repository (token sent as an HTTP header through git's
// environment, never in argv, the URL or the log), or — on the local cloud — a local git repository or a plain
// directory. Every failure is a BuildError for the build log.

export interface FetchSourceOptions {
  repoUrl: string;
  ref?: string;
  dest: string;
  token?: string;
  allowLocal: boolean;
  /** The folders the workspace was granted: a local repository must be under one, after symlinks. */
  localRoots?: string[];
  log: LogLine;
}

const GIT_TIMEOUT_MS = 5 * 60_000;
const FULL_SHA = /^[0-9a-f]{40}$/i;
const SHORT_SHA = /^[0-9a-f]{4,40}$/i;
/** Not copied from a plain directory: history, and dependencies the build installs itself. */
const SKIPPED = new Set([".git", "node_modules"]);

type Source =
  | {
      kind: "git";
      url: string;
      shown: string;
      protocol: string;
      /** A local repository: cloned from a checked private copy (local-snapshot.ts), not from here. */
      local?: { dir: string; roots: string[] };
    }
  | { kind: "dir"; dir: string };

/** Fetches the source, then refuses it when a symlink in it leads outside (before anything reads a file). */
export async function fetchSource(opts: FetchSourceOptions): Promise<{ commit?: string }> {
  const fetched = await fetchTree(opts);
  await checkSymlinks(opts.dest);
  return fetched;
}

async function fetchTree(opts: FetchSourceOptions): Promise<{ commit?: string }> {
  const source = await classify(opts.repoUrl.trim(), opts.allowLocal, opts.localRoots ?? []);
  const ref = opts.ref?.trim() || undefined;
  if (ref !== undefined) checkRef(ref);
  await mkdir(opts.dest, { recursive: true });
  if ((await readdir(opts.dest)).length > 0) throw new BuildError("source destination is not empty");
  if (source.kind === "dir") {
    if (ref)
      opts.log(`${source.dir} is not a git repository: ref ${ref} ignored, copying the directory as is`);
    else opts.log(`copying ${source.dir} (not a git repository)`);
    try {
      await cp(source.dir, opts.dest, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (src) => src === source.dir || !SKIPPED.has(path.basename(src)),
      });
    } catch (err) {
      throw new BuildError(`copying ${source.dir} failed: ${(err as Error).message}`);
    }
    return {};
  }
  // Linux: the copy checks what it opened by its descriptor's path; elsewhere git reads the checked folder itself.
  if (source.local && process.platform === "linux") {
    const copy = await mkdtemp(path.join(tmpdir(), "ap-repo-"));
    try {
      await snapshotGitRepository(source.local.dir, source.local.roots, copy);
      return {
        commit: await cloneGit({ ...source, url: pathToFileURL(snapshotRepo(copy)).href }, ref, opts),
      };
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  }
  return { commit: await cloneGit(source, ref, opts) };
}

async function classify(repoUrl: string, allowLocal: boolean, roots: string[]): Promise<Source> {
  if (repoUrl === "") throw new BuildError("repository URL is empty");
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(repoUrl)) {
    let url: URL;
    try {
      url = new URL(repoUrl);
    } catch {
      throw new BuildError("repository URL is not a valid URL");
    }
    if (url.username || url.password)
      throw new BuildError("repository URL must not carry credentials; set the deployment's token instead");
    if (url.protocol === "https:" || (url.protocol === "http:" && allowLocal)) {
      if (!allowLocal && (await endpointProblem(repoUrl, false)))
        throw new BuildError(`repository URL ${repoUrl} must point to a public host`);
      return { kind: "git", url: repoUrl, shown: repoUrl, protocol: url.protocol.slice(0, -1) };
    }
    if (url.protocol === "file:" && allowLocal) {
      let dir: string;
      try {
        dir = fileURLToPath(url);
      } catch {
        throw new BuildError(`repository URL ${repoUrl} is not a local path`);
      }
      return localSource(dir, repoUrl, roots);
    }
    if (url.protocol === "http:") throw new BuildError("repository URL must use https");
    if (url.protocol === "file:")
      throw new BuildError("local repositories are only allowed on the local cloud");
    throw new BuildError(`repository URL scheme ${url.protocol} is not supported; use an https URL`);
  }
  if (/^[\w.-]+@[\w.-]+:/.test(repoUrl))
    throw new BuildError("SSH repository URLs are not supported; use an https URL and a token");
  if (!allowLocal) throw new BuildError("repository URL must be an https URL");
  return localSource(path.resolve(repoUrl), repoUrl, roots);
}

async function localSource(dir: string, shown: string, roots: string[]): Promise<Source> {
  const problem = await localRepoProblem(dir, roots);
  if (problem) throw new BuildError(problem);
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw new BuildError(`repository ${shown} not found`);
  const exists = (p: string) =>
    stat(path.join(dir, p)).then(
      () => true,
      () => false,
    );
  // A working tree has .git (a directory, or a file for worktrees); a bare repository has HEAD and objects/.
  const isRepo = (await exists(".git")) || ((await exists("HEAD")) && (await exists("objects")));
  if (!isRepo) return { kind: "dir", dir };
  return { kind: "git", url: pathToFileURL(dir).href, shown, protocol: "file", local: { dir, roots } };
}

/** Characters and sequences git's check-ref-format refuses, or that would make a revision expression. */
const BAD_REF = /[\s~^:?*[\\]|\.\.|@\{|\/\/|\.lock$|^\/|\/$/;
const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** Refs come from API callers: nothing git could read as an option or a revision expression. */
function checkRef(ref: string) {
  if (ref.startsWith("-") || BAD_REF.test(ref) || hasControl(ref) || ref.length > 255)
    throw new BuildError(`ref ${JSON.stringify(ref)} is not a valid git ref`);
}

/** git's environment: no prompt, no system or user config, only the repository's protocol. */
const gitEnv = (protocol: string): Record<string, string> => ({
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ALLOW_PROTOCOL: protocol,
  LANG: "C",
  LC_ALL: "C",
});

/**
 * The commit a full ref (`refs/heads/main`, `refs/tags/v1`) names now in a local git repository (the local
 * cloud's repositories), or undefined when it names none. https repositories are asked through their host's API.
 */
export async function localRefCommit(
  repoUrl: string,
  ref: string,
  roots: string[],
): Promise<string | undefined> {
  const source = await classify(repoUrl.trim(), true, roots);
  if (source.kind !== "git" || source.protocol !== "file") return undefined;
  checkRef(ref);
  const r = await run("git", ["ls-remote", "--", source.url, ref], {
    env: toolEnv(gitEnv("file")),
    timeoutMs: 30_000,
  });
  if (r.code !== 0) throw new BuildError(`git ls-remote failed: ${r.tail.join(" ")}`);
  const names = new Map(r.stdout.split("\n").map((l) => [l.split("\t")[1], l.split("\t")[0]] as const));
  // An annotated tag names a tag object: its commit is the peeled `^{}` line.
  return names.get(`${ref}^{}`) ?? names.get(ref);
}

async function cloneGit(
  source: Extract<Source, { kind: "git" }>,
  ref: string | undefined,
  opts: FetchSourceOptions,
): Promise<string> {
  const extra = gitEnv(source.protocol);
  const secrets: string[] = [];
  if (opts.token) {
    const basic = Buffer.from(`x-access-token:${opts.token}`).toString("base64");
    // Scoped to the repository's origin so a redirect to another host does not receive it.
    extra.GIT_CONFIG_COUNT = "1";
    extra.GIT_CONFIG_KEY_0 = `http.${new URL(source.url).origin}/.extraHeader`;
    extra.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${basic}`;
    secrets.push(opts.token, basic, encodeURIComponent(opts.token));
  }
  const env = toolEnv(extra);
  const redact = redactor(secrets);
  const dest = opts.dest;
  const git = async (args: string[], quiet = false) => {
    const r = await run("git", args, {
      env,
      redact,
      log: quiet ? undefined : opts.log,
      timeoutMs: GIT_TIMEOUT_MS,
    });
    if (r.timedOut) throw new BuildError(`git ${args[0]} timed out after ${GIT_TIMEOUT_MS / 1000} s`);
    return r;
  };
  const failure = (what: string, tail: string[]) =>
    tail.some((l) => /could not read Username|Authentication failed|terminal prompts disabled/i.test(l))
      ? new BuildError(
          `${what} failed: ${source.shown} refused access (${opts.token ? "the token was not accepted" : "a private repository needs a token"})`,
        )
      : new BuildError(
          `${what} failed: ${tail.filter((l) => /fatal|error/i.test(l)).join(" ") || tail.join(" ")}`,
        );
  const notFound = () => new BuildError(`ref ${ref} not found in ${source.shown}`);
  const reset = async () => {
    await rm(dest, { recursive: true, force: true });
    await mkdir(dest, { recursive: true });
  };

  opts.log(`cloning ${source.shown}${ref ? ` at ${ref}` : ""}`);
  if (!ref || !FULL_SHA.test(ref)) {
    const r = await git(["clone", "--depth", "1", ...(ref ? ["--branch", ref] : []), "--", source.url, dest]);
    if (r.code === 0) return head(git, dest);
    const missingRef = r.tail.some((l) => /Remote branch .* not found/i.test(l));
    if (!missingRef) throw failure("git clone", r.tail);
    if (!ref || !SHORT_SHA.test(ref)) throw notFound();
    await reset();
  }
  // A commit: try fetching just that commit, then fall back to the whole history for short or unadvertised shas.
  for (const args of [
    ["init", "--quiet", dest],
    ["-C", dest, "remote", "add", "origin", "--", source.url],
  ]) {
    const r = await git(args);
    if (r.code !== 0) throw failure(`git ${args[0] === "init" ? "init" : "remote add"}`, r.tail);
  }
  if (FULL_SHA.test(ref!)) {
    const one = await git(["-C", dest, "fetch", "--quiet", "--depth", "1", "origin", ref!], true);
    if (one.code === 0) return checkout(git, dest, "FETCH_HEAD", notFound, failure);
  }
  opts.log(`fetching the history of ${source.shown} to find ${ref}`);
  const all = await git([
    "-C",
    dest,
    "fetch",
    "--quiet",
    "origin",
    "+refs/heads/*:refs/remotes/origin/*",
    "+refs/tags/*:refs/tags/*",
  ]);
  if (all.code !== 0) throw failure("git fetch", all.tail);
  const resolved = await git(["-C", dest, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`], true);
  if (resolved.code !== 0) throw notFound();
  return checkout(git, dest, resolved.stdout.trim(), notFound, failure);
}

type Git = (args: string[], quiet?: boolean) => ReturnType<typeof run>;

async function checkout(
  git: Git,
  dest: string,
  rev: string,
  notFound: () => BuildError,
  failure: (what: string, tail: string[]) => BuildError,
): Promise<string> {
  const r = await git(["-C", dest, "checkout", "--quiet", "--detach", rev]);
  if (r.code !== 0)
    throw r.tail.some((l) => /did not match|unknown revision/i.test(l))
      ? notFound()
      : failure("git checkout", r.tail);
  return head(git, dest);
}

async function head(git: Git, dest: string): Promise<string> {
  const r = await git(["-C", dest, "rev-parse", "HEAD"], true);
  if (r.code !== 0) throw new BuildError("git rev-parse HEAD failed after checkout");
  return r.stdout.trim();
}
