import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, lchownSync, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { config, processEnvironment } from "../config.ts";
import { sandboxNodeMajor } from "./sandbox-node.ts";
import { seccompProgram, seccompSupported } from "./seccomp.ts";

// The OS sandbox for processes that run a deployment's code on the local cloud (its runtime, the deploy step's
// smoke test, the build's install and bundling): bubblewrap, with new user, pid, ipc, uts, cgroup and network
// namespaces (only a loopback of its own: the platform's services on the host's loopback are out of reach), a
// root file system made of read-only binds of exactly what it runs (Node and its libraries, the folders named)
// and a scratch tmpfs of its own, no capabilities, a new session, killed with its parent, a seccomp filter
// (seccomp.ts: threads but no process; no ptrace, mounts, keyrings, BPF), no nested user namespace, and rlimits
// on memory, CPU time, open files and tasks. A platform running as root drops to a host uid of the sandbox's own
// first (sandboxHostId), so nothing inside is ever host root. Inside, Node's permission model is a second fence.
// Node 20 calls the permission switch --experimental-permission, Node 22+ --permission.
const permissionFlag = () =>
  Number(sandboxNodeMajor()) >= 22 ? "--permission" : "--experimental-permission";

/** Node's permission model: read only the folders named, write only the scratch, start no process or thread. */
export function sandboxFlags(opts: { read: string[]; write: string[] }): string[] {
  // Inside the OS sandbox /proc is its own pid namespace's: readable, as in any Linux process.
  const proc = osSandbox().available ? ["/proc"] : [];
  return [
    permissionFlag(),
    ...[...opts.read, ...proc].map((dir) => `--allow-fs-read=${dir}`),
    ...opts.write.map((dir) => `--allow-fs-write=${dir}`),
    "--no-warnings",
  ];
}

export interface SandboxLimits {
  /** The V8 heap (--max-old-space-size) and, doubled, the process's writable memory (RLIMIT_DATA). */
  memoryMb: number;
  /** CPU seconds over the process's life (RLIMIT_CPU); at the limit it gets SIGXCPU, then SIGKILL. */
  cpuSeconds: number;
  /** Open file descriptors (RLIMIT_NOFILE). */
  openFiles: number;
  /** Size of its scratch tmpfs (/tmp, also its HOME). */
  scratchMb: number;
  /**
   * Its threads and processes together (RLIMIT_NPROC): a fork bomb stops there. Applied where the sandbox has a
   * host uid of its own (a platform running as root); elsewhere the limit would count the operator's processes.
   */
  tasks: number;
}

export interface SandboxSpec {
  /** Whose code runs (a deployment, a workspace's build): its host uid when the platform is root. */
  owner: string;
  /** Host paths bound read-only at the same path inside. */
  readOnly: string[];
  /** Host paths bound read-write at the same path inside (a socket folder). */
  readWrite?: string[];
  cwd: string;
  env: Record<string, string>;
  limits: SandboxLimits;
  /** The child's descriptor the seccomp program is written to (3 unless the child uses 3 itself). */
  seccompFd?: number;
  /**
   * A build's needs: the system's programs and libraries read-only (/usr, with its /bin, /lib links; the TLS
   * certificates), and new processes allowed (npm starts git and node, esbuild its binary).
   */
  tools?: boolean;
}

export interface SandboxedCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The seccomp program, to be written to the child's seccompFd (a pipe) right after spawning. */
  seccomp?: Buffer;
}

/** The scratch folder inside every sandbox (a tmpfs of its own). */
export const SANDBOX_SCRATCH = "/tmp";

export type SandboxSupport =
  | {
      available: true;
      /** This bwrap can forbid nested user namespaces itself (--disable-userns, bubblewrap 0.8+). */
      disableUserns: boolean;
    }
  | { available: false; reason: string };
let support: SandboxSupport | undefined;

/** Whether this host can run the sandbox (Linux, bwrap and prlimit installed, user namespaces allowed). */
export function osSandbox(): SandboxSupport {
  support ??= probe();
  return support;
}

/**
 * Why a workspace's deployment may not run its code on this host (no sandbox, and neither the bootstrap workspace
 * nor AGENT_UNSANDBOXED=1), or undefined when it may.
 */
export function unsandboxedRefusal(tenant: string): string | undefined {
  if (osSandbox().available || config.sandbox.allowUnsandboxed || tenant === config.sandbox.bootstrapTenant)
    return undefined;
  return "This host has no OS sandbox for deployments' code: only the bootstrap workspace's deployments run here (the operator may set AGENT_UNSANDBOXED=1)";
}

function probe(): SandboxSupport {
  if (process.platform !== "linux")
    return { available: false, reason: `bubblewrap needs Linux (this is ${process.platform})` };
  for (const tool of ["bwrap", "prlimit", ...(runsAsRoot() ? ["setpriv"] : [])])
    if (!which(tool))
      return {
        available: false,
        reason: `${tool} is not installed (Debian: apt-get install bubblewrap util-linux)`,
      };
  const help = spawnSync("bwrap", ["--help"], { encoding: "utf8", timeout: 10_000 });
  const disableUserns = `${help.stdout}${help.stderr}`.includes("--disable-userns");
  // Tried as it will run: as the sandbox's own uid when the platform is root.
  const probeUid = sandboxHostId("probe");
  const [command, ...args] = [
    ...(probeUid === undefined ? [] : dropTo(probeUid)),
    "bwrap",
    "--unshare-all",
    "--unshare-user",
    ...(disableUserns ? ["--disable-userns"] : []),
    "--die-with-parent",
    "--ro-bind",
    "/",
    "/",
    "true",
  ];
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 10_000 });
  if (r.status !== 0)
    return {
      available: false,
      reason: `bwrap cannot create its namespaces here (${(r.stderr || r.error?.message || "").trim() || `exit ${r.status}`}): user namespaces are off or not allowed in this container`,
    };
  return { available: true, disableUserns };
}

const runsAsRoot = () => process.getuid?.() === 0;

/** The sandbox owner of a deployment's code (its runtime and the deploy step's smoke test): one host uid. */
export const runtimeSandboxOwner = (deploymentId: string) => `runtime:${deploymentId}`;

/** Host uids (and gids) of sandboxes start here: far above any system's or person's, below 2^31. */
const SANDBOX_ID_BASE = 0x60000000;

/**
 * The host uid and gid the sandbox of `owner` runs as when the platform runs as root (undefined otherwise: it then
 * runs as the platform's own, unprivileged user): one per owner, so its task limit and its files are its own, and
 * an escape from its namespaces is an unprivileged process. No passwd entry is needed.
 */
export function sandboxHostId(owner: string): number | undefined {
  if (!runsAsRoot()) return undefined;
  return SANDBOX_ID_BASE + createHash("sha256").update(owner).digest().readUIntBE(0, 3);
}

/**
 * Makes `paths` (and everything under them, links themselves and not what they point to) the host uid's of
 * `owner`'s sandbox, so it can use the folders it binds read-write; nothing to do when the platform is not root.
 */
export function giveToSandbox(owner: string, paths: string[]): void {
  const id = sandboxHostId(owner);
  if (id === undefined || paths.length === 0) return;
  // A path with nothing under it (a runtime's fresh socket folder, a file, a link) is given here: a chown process
  // forked from the platform costs it a copy of its page tables (a tenth of a second of CPU at a test run's size).
  const trees: string[] = [];
  for (const p of paths) {
    if (lstatSync(p).isDirectory() && readdirSync(p).length > 0) trees.push(p);
    else lchownSync(p, id, id);
  }
  if (trees.length)
    execFileSync("chown", ["-R", "-h", `${id}:${id}`, "--", ...trees], {
      stdio: ["ignore", "ignore", "pipe"],
    });
}

/**
 * Lets `owner`'s sandbox alone read `dir` (a revision's artifact) when the platform is root: `dir` becomes its
 * uid's, mode 0700, and the folder holding it lets others pass through (x) without listing it, so a private
 * artifacts folder stays private to everyone but each artifact's own sandbox.
 */
export function shareWithSandbox(owner: string, dir: string): void {
  const id = sandboxHostId(owner);
  if (id === undefined) return;
  giveToSandbox(owner, [dir]);
  chmodSync(dir, 0o700);
  const parent = path.dirname(path.resolve(dir));
  chmodSync(parent, statSync(parent).mode | 0o001);
}

/**
 * Whether a sandbox's own uid can reach `target` (every folder above it lets others through) when the platform is
 * root; always true otherwise (the sandbox runs as the platform's user).
 */
export function sandboxCanReach(target: string): boolean {
  if (!runsAsRoot()) return true;
  for (let dir = path.dirname(path.resolve(target)); ; dir = path.dirname(dir)) {
    if (!existsSync(dir) || (statSync(dir).mode & 0o001) === 0) return false;
    if (path.dirname(dir) === dir) return true;
  }
}

/** The command that drops to `id` (uid, gid, no supplementary group) and runs what follows. */
function dropTo(id: number): string[] {
  return [which("setpriv") ?? "setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups", "--"];
}

function which(tool: string): string | undefined {
  for (const dir of (processEnvironment().PATH ?? "/usr/bin:/bin").split(path.delimiter)) {
    const p = path.join(dir, tool);
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}

const nodeFiles = new Map<string, string[]>();

/** A Node binary and the shared libraries it loads (read off ldd), each by the path it is loaded from. */
function nodeRuntimeFiles(node: string): string[] {
  const known = nodeFiles.get(node);
  if (known) return known;
  const exe = realpathSync(node);
  const files = new Set([exe]);
  try {
    const out = execFileSync("ldd", [exe], { encoding: "utf8" });
    for (const m of out.matchAll(/(?:=>\s*)?(\/[^\s)]+)\s+\(0x/g)) files.add(m[1]);
  } catch {
    // A static binary (ldd says so with a non-zero exit): the binary alone.
  }
  for (const f of ["/etc/ld.so.cache"]) if (existsSync(f)) files.add(f);
  nodeFiles.set(node, [...files]);
  return [...files];
}

/** Certificate bundles a TLS client inside may need (public files; NODE_EXTRA_CA_CERTS names one). */
function caFiles(env: Record<string, string>): string[] {
  const extra = env.NODE_EXTRA_CA_CERTS;
  return extra && existsSync(extra) ? [realpathSync(extra)] : [];
}

/**
 * The command line that runs `argv` (argv[0]: the sandbox's Node, sandboxNode(), bound read-only with its
 * libraries) in the sandbox. Paths keep their names inside, so a program reads the same paths as outside. The
 * caller spawns `command args` with `env` and stdio[3] a pipe that receives `seccomp`; the folders it binds
 * read-write are the owner's host uid's (giveToSandbox) when the platform is root.
 */
export function sandboxedCommand(argv: string[], spec: SandboxSpec): SandboxedCommand {
  const { limits } = spec;
  const support = osSandbox();
  const hostId = sandboxHostId(spec.owner);
  const bw: string[] = [
    "--unshare-user",
    ...(support.available && support.disableUserns ? ["--disable-userns"] : []),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--uid",
    "65534",
    "--gid",
    "65534",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    String(limits.scratchMb * 1024 * 1024),
    "--tmpfs",
    SANDBOX_SCRATCH,
  ];
  const ro = new Set([
    ...(spec.tools ? [] : nodeRuntimeFiles(argv[0])),
    ...caFiles(spec.env),
    ...spec.readOnly,
  ]);
  if (spec.tools) {
    // The sandbox's Node, and the platform's Node installation (its npm beside it) when it is not the system's.
    for (const node of [argv[0], process.execPath]) {
      const prefix = path.dirname(path.dirname(realpathSync(node)));
      if (!prefix.startsWith("/usr")) ro.add(prefix);
    }
    for (const p of ["/usr", "/etc/ssl", "/etc/ca-certificates", "/etc/alternatives"])
      if (existsSync(p)) ro.add(p);
    // Merged /usr: /bin, /lib… are links into it; elsewhere they are folders of their own.
    for (const link of ["/bin", "/sbin", "/lib", "/lib64", "/lib32"]) {
      if (!existsSync(link)) continue;
      const real = realpathSync(link);
      if (real.startsWith("/usr/")) bw.push("--symlink", real.slice(1), link);
      else ro.add(link);
    }
  }
  for (const p of ro) bw.push("--ro-bind", p, p);
  for (const p of spec.readWrite ?? []) bw.push("--bind", p, p);
  bw.push("--chdir", spec.cwd);
  const seccomp = seccompSupported() ? seccompProgram(process.arch, { processes: spec.tools }) : undefined;
  if (seccomp) bw.push("--seccomp", String(spec.seccompFd ?? 3));
  const dataBytes = limits.memoryMb * 2 * 1024 * 1024;
  const prlimit = [
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 5}`,
    `--nofile=${limits.openFiles}`,
    `--data=${dataBytes}`,
    ...(hostId === undefined ? [] : [`--nproc=${limits.tasks}`]),
  ];
  const drop = hostId === undefined ? [] : dropTo(hostId);
  return {
    command: which("prlimit") ?? "prlimit",
    args: [...prlimit, "--", ...drop, which("bwrap") ?? "bwrap", ...bw, "--", ...argv],
    env: { HOME: SANDBOX_SCRATCH, TMPDIR: SANDBOX_SCRATCH, PATH: "/nonexistent", ...spec.env },
    seccomp,
  };
}

/**
 * Why a sandboxed process ended, when one of its limits ended it (from its exit and the end of its stderr), in
 * words for the run's error and the deploy log; undefined for any other end.
 */
export function limitThatKilled(
  exit: { code: number | null; signal: NodeJS.Signals | null; stderrTail: string },
  limits: SandboxLimits,
): string | undefined {
  if (exit.signal === "SIGXCPU" || (exit.signal === "SIGKILL" && /SIGXCPU|CPU time/i.test(exit.stderrTail)))
    return `the deployment's runtime used its ${limits.cpuSeconds} s of CPU time and was stopped (sandbox CPU limit)`;
  if (
    /heap out of memory|Reached heap limit|Allocation failed|std::bad_alloc|Cannot allocate memory/i.test(
      exit.stderrTail,
    )
  )
    return `the deployment's runtime ran out of its ${limits.memoryMb} MB of memory and was stopped (sandbox memory limit)`;
  if (/EMFILE|too many open files/i.test(exit.stderrTail) && exit.code !== 0)
    return `the deployment's runtime opened more than ${limits.openFiles} files at once and stopped (sandbox open-files limit)`;
  return undefined;
}
