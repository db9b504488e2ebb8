import { lstat, mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { BuildError } from "../errors.ts";
import { type LogLine, networkEnv, redactor, run } from "./exec.ts";
import { filterNpmrc } from "./npmrc.ts";
import { isWithin } from "./paths.ts";

// How npm runs in a build: an environment built from nothing (no platform variable or credential, no
// npm_config_* of the platform; only the operator's proxy and CA settings), config files of the build's own
// in its scratch folder, and the repository's .npmrc files moved aside for the install so npm reads only
// their filtered form. Settings that run programs are pinned on the
// command line too, which outranks any .npmrc, including those of git dependencies npm prepares.

export interface NpmSetup {
  args: string[];
  env: Record<string, string>;
  redact: (text: string) => string;
  /** The filtered config npm is given (part of the dependency cache's key). */
  config: string;
  /** npm's version as this setup runs it. */
  version: () => Promise<string>;
  /** Puts the repository's .npmrc files back. */
  restore: () => Promise<void>;
}

/** Where a build's npm finds node, npm and git: beside this Node, then the system's folders. */
export const TOOL_PATH = [path.dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(
  path.delimiter,
);

/** The .npmrc files from `pkgDir` up to `repoDir`, outermost first (npm's project and workspace-root files). */
async function npmrcFiles(repoDir: string, pkgDir: string): Promise<string[]> {
  const found: string[] = [];
  for (let dir = pkgDir; isWithin(repoDir, dir); dir = path.dirname(dir)) {
    const file = path.join(dir, ".npmrc");
    const st = await lstat(file).catch(() => undefined);
    if (st) {
      if (!st.isFile()) throw new BuildError(`${path.relative(repoDir, file)} is not a regular file`);
      found.unshift(file);
    }
    if (dir === repoDir || dir === path.dirname(dir)) break;
  }
  return found;
}

export async function npmSetup(opts: {
  repoDir: string;
  pkgDir: string;
  scratch: string;
  secrets?: () => Promise<Record<string, string>>;
  /** npm's download cache (default: in the scratch folder). */
  npmCache?: string;
  log: LogLine;
}): Promise<NpmSetup> {
  const { repoDir, scratch, log } = opts;
  const files = await npmrcFiles(repoDir, opts.pkgDir);
  const texts = await Promise.all(
    files.map(async (f) => ({
      name: path.relative(repoDir, f) || ".npmrc",
      text: await readFile(f, "utf8"),
    })),
  );
  const wantsSecrets = texts.some((t) => t.text.includes("_authToken"));
  const secrets = wantsSecrets && opts.secrets ? await opts.secrets() : {};
  const filtered = filterNpmrc(texts, secrets);
  for (const d of filtered.dropped) log(`npmrc setting dropped: ${d}`);
  const home = path.join(scratch, "home");
  const tmp = path.join(scratch, "tmp");
  await Promise.all([home, tmp].map((d) => mkdir(d, { recursive: true })));
  const userconfig = path.join(scratch, "npmrc");
  const globalconfig = path.join(scratch, "npmrc-global");
  await writeFile(userconfig, filtered.text, { mode: 0o600 });
  await writeFile(globalconfig, "", { mode: 0o600 });
  // Set aside in its own folder: the repository and the scratch folder are separate mounts in the build's sandbox
  // (a rename across them fails with EXDEV), and npm reads no other name than .npmrc.
  const aside = files.map((f, i) => path.join(path.dirname(f), `.npmrc.set-aside-by-platform-${i}`));
  for (const [i, f] of files.entries()) await rename(f, aside[i]!);
  const args = [
    `--userconfig=${userconfig}`,
    `--globalconfig=${globalconfig}`,
    `--prefix=${opts.pkgDir}`,
    `--cache=${opts.npmCache ?? path.join(scratch, "npm-cache")}`,
    "--git=git",
    "--update-notifier=false",
  ];
  const env = {
    ...networkEnv(),
    PATH: TOOL_PATH,
    HOME: home,
    TMPDIR: tmp,
    LANG: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    // git dependencies come over https only: file:// or ext:: would read or run things on the build machine.
    GIT_ALLOW_PROTOCOL: "https",
    ...filtered.env,
  };
  return {
    args,
    env,
    redact: redactor(Object.values(filtered.env)),
    version: async () => {
      const r = await run("npm", ["--version", ...args], { cwd: scratch, env, timeoutMs: 60_000 });
      if (r.code !== 0) throw new BuildError(`npm --version failed: ${r.tail.join(" ")}`);
      return r.stdout.trim();
    },
    config: filtered.text,
    restore: async () => {
      for (const [i, f] of files.entries()) await rename(aside[i]!, f).catch(() => {});
    },
  };
}

/**
 * The deployment's secrets an .npmrc of the repository names (`${NAME}`), for the build's untrusted step: it is
 * handed those and no other. `unseal` runs only when some .npmrc names one.
 */
export async function npmrcSecrets(
  repoDir: string,
  unseal: () => Promise<Record<string, string>>,
): Promise<Record<string, string>> {
  const entries = await readdir(repoDir, { recursive: true, withFileTypes: true });
  const names = new Set<string>();
  for (const e of entries) {
    if (e.name !== ".npmrc" || !e.isFile()) continue;
    const rel = path.relative(repoDir, e.parentPath).split(path.sep);
    if (rel.includes("node_modules") || rel[0] === ".git") continue;
    const text = await readFile(path.join(e.parentPath, e.name), "utf8");
    for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) names.add(m[1]!);
  }
  if (!names.size) return {};
  const secrets = await unseal();
  return Object.fromEntries([...names].filter((n) => Object.hasOwn(secrets, n)).map((n) => [n, secrets[n]!]));
}
