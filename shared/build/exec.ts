import { type ChildProcess, spawn } from "node:child_process";
import { processEnvironment } from "../config.ts";

// Child processes of the build (git, npm): output streamed to the build log line by line with secrets
// redacted, a tail kept for the failure message, a hard timeout, and an environment built from an allow-list
// so the platform's own credentials never reach a repository's tooling.

export type LogLine = (line: string) => void;

/** The operator's network settings a build needs to reach registries (proxies, CA); no credential of the platform. */
const NETWORK = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
];
/** Environment variables a build tool may see from the platform's environment (and the network settings). */
const PASSED = ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "SYSTEMROOT", ...NETWORK];

const pick = (names: string[]) => {
  const env: Record<string, string> = {};
  const inherited = processEnvironment();
  for (const name of names) {
    const v = inherited[name];
    if (v !== undefined) env[name] = v;
  }
  return env;
};

export const networkEnv = (): Record<string, string> => pick(NETWORK);

export function toolEnv(extra: Record<string, string>): Record<string, string> {
  return { ...pick(PASSED), ...extra };
}

/**
 * A child's stdio sockets can fail after it dies (a killed child leaves unread bytes: the read side gets
 * ECONNRESET). Without a listener that error would end the platform process; the child's exit says what happened.
 */
export function tolerateStdioErrors(child: ChildProcess): ChildProcess {
  for (const stream of child.stdio) stream?.on("error", () => {});
  return child;
}

export function redactor(secrets: (string | undefined)[]): (text: string) => string {
  const list = secrets.filter((s): s is string => typeof s === "string" && s.length >= 4);
  list.sort((a, b) => b.length - a.length);
  return (text) => list.reduce((t, s) => t.split(s).join("[redacted]"), text);
}

export interface RunResult {
  code: number | null;
  /** The last lines of stdout and stderr together, redacted. */
  tail: string[];
  stdout: string;
  timedOut: boolean;
}

export function run(
  cmd: string,
  args: string[],
  opts: {
    cwd?: string;
    env: Record<string, string>;
    log?: LogLine;
    redact?: (text: string) => string;
    timeoutMs: number;
    tailLines?: number;
    /** A seccomp program for a sandboxed command (shared/containment/sandbox.ts), written to its descriptor 3. */
    seccomp?: Buffer;
    /** Kills the command when aborted (a build past what it may write). */
    signal?: AbortSignal;
  },
): Promise<RunResult> {
  const redact = opts.redact ?? ((t: string) => t);
  const keep = opts.tailLines ?? 20;
  return new Promise((resolve) => {
    const tail: string[] = [];
    let stdout = "";
    let timedOut = false;
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: opts.seccomp ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
    });
    tolerateStdioErrors(child);
    if (opts.seccomp) (child.stdio[3] as NodeJS.WritableStream).end(opts.seccomp);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, opts.timeoutMs);
    const kill = () => child.kill("SIGKILL");
    if (opts.signal?.aborted) kill();
    opts.signal?.addEventListener("abort", kill, { once: true });
    const lines = (onLine: (l: string) => void) => {
      let partial = "";
      return {
        data(chunk: Buffer) {
          const parts = (partial + chunk.toString("utf8")).split(/\r?\n|\r/);
          partial = parts.pop() ?? "";
          for (const p of parts) onLine(p);
        },
        end() {
          if (partial) onLine(partial);
          partial = "";
        },
      };
    };
    const onLine = (l: string) => {
      const line = redact(l).trimEnd();
      if (!line) return;
      tail.push(line);
      if (tail.length > keep) tail.shift();
      opts.log?.(line);
    };
    const out = lines(onLine);
    const err = lines(onLine);
    child.stdout!.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
      out.data(c);
    });
    child.stderr!.on("data", (c: Buffer) => err.data(c));
    let done = false;
    const finish = (code: number | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", kill);
      out.end();
      err.end();
      resolve({ code, tail, stdout, timedOut });
    };
    child.on("error", (e) => {
      onLine(`${cmd}: ${e.message}`);
      finish(null);
    });
    child.on("close", (code) => finish(code));
  });
}
