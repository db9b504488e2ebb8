import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BuildError } from "../errors.ts";
import type { SourceBuildJob } from "./build-source.ts";
import { type LogLine, networkEnv, redactor, run } from "./exec.ts";
import { TOOL_PATH } from "./npm-env.ts";

// Runs the untrusted step of a build (build-source.ts) in a child process with an environment built from
// nothing but the operator's proxy and CA settings: it gets its job (folders, the npm secrets it needs) in a file, and reports log lines on stdout.
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const ENTRY = path.join(ROOT, "infra", "build", "build-source.ts");
const TIMEOUT_MS = 20 * 60_000;

/**
 * The command line the untrusted step runs as. This is where the local cloud's OS sandbox wraps it
 * (infra/local/sandbox.ts, bubblewrap): `read` bound read-only (Node, the platform's code and packages),
 * `write` read-write (the job's folders), nothing else of the machine.
 */
export function sandboxed(argv: string[], _binds: { read: string[]; write: string[] }): string[] {
  return argv;
}

export async function runSourceBuild(job: SourceBuildJob, log: LogLine): Promise<void> {
  const home = path.join(job.scratch, "home");
  const tmp = path.join(job.scratch, "tmp");
  await Promise.all([home, tmp, job.out].map((d) => mkdir(d, { recursive: true })));
  const jobFile = path.join(job.scratch, "job.json");
  await writeFile(jobFile, JSON.stringify(job), { mode: 0o600 });
  const argv = sandboxed([process.execPath, "--import", "tsx", ENTRY, jobFile], {
    read: [path.dirname(process.execPath), ROOT],
    write: [job.src, job.out, job.scratch, ...(job.cacheDir ? [job.cacheDir] : [])],
  });
  let outcome: { ok?: true; error?: string; expected?: boolean } | undefined;
  const r = await run(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: { ...networkEnv(), PATH: TOOL_PATH, HOME: home, TMPDIR: tmp, LANG: "C" },
    redact: redactor(Object.values(job.npmSecrets)),
    timeoutMs: TIMEOUT_MS,
    log: (line) => {
      let event: { log?: string; ok?: true; error?: string; expected?: boolean } | undefined;
      try {
        event = JSON.parse(line);
      } catch {
        event = undefined;
      }
      if (typeof event?.log === "string") log(event.log);
      else if (event && (event.ok || typeof event.error === "string")) outcome = event;
      else log(line);
    },
  });
  if (r.timedOut) throw new BuildError(`the build timed out after ${TIMEOUT_MS / 60_000} min`);
  if (outcome?.ok && r.code === 0) return;
  if (outcome?.error !== undefined)
    throw outcome.expected ? new BuildError(outcome.error) : new Error(outcome.error);
  throw new BuildError(`the build step ended without a result (exit code ${r.code ?? "none"})`);
}
