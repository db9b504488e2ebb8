import type { GraphInfo } from "../records/control.ts";

export type { GraphInfo };

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { processEnvironment } from "../config.ts";
import {
  osSandbox,
  SANDBOX_SCRATCH,
  type SandboxLimits,
  sandboxedCommand,
  sandboxFlags,
  shareWithSandbox,
  unsandboxedRefusal,
} from "../containment/sandbox.ts";
import { sandboxNode } from "../containment/sandbox-node.ts";
import { DeployError } from "../errors.ts";
import type { ArtifactManifest } from "./bundle.ts";
import { redactor, tolerateStdioErrors } from "./exec.ts";
import { isWithin } from "./paths.ts";

// The deploy step's smoke test: each bundled graph is imported in a sandboxed child process whose environment is
// only the graph's own (config env + deployment secrets), and must yield a compiled graph whose nodes are listed.
// A graph that throws or exports no graph is reported with its reason while the others deploy (the runtime serves
// them, and answers the failed one's assistants with that reason); a revision none of whose graphs load fails.

/** The graphs of a revision that may deploy: at least one loads, else every reason fails the deploy. */
export function someGraphLoads(graphs: GraphInfo[]): GraphInfo[] {
  if (graphs.length && graphs.every((g) => g.error))
    throw new DeployError(graphs.map((g) => `graph ${g.graph_id}: ${g.error}`).join("\n"));
  return graphs;
}

const DEFAULT_TIMEOUT_MS = 60_000;

// The child: kept here as a string so the Lambda bundle ships no extra file. It reports on fd 3 so whatever a
// graph prints on stdout cannot be mistaken for a result. A graph export may be compiled (invoke + getGraph),
// a builder (compile), or a factory called with a config, as the LangGraph.js API server accepts.
const CHILD = `
import { writeSync } from "node:fs";
import { pathToFileURL } from "node:url";
const jobs = JSON.parse(process.argv[process.argv.length - 1]);
const say = (o) => writeSync(3, JSON.stringify(o) + "\\n");
// The LangGraph server's global logger (getLogger() of @langchain/langgraph-sdk/logging), as the runtime
// registers it: graphs that call it at import must load here too. Lines go to stderr as JSON.
const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");
if (!(SDK_LOGGER in globalThis)) {
  const sdkLogger = {};
  for (const level of ["error", "warn", "info", "http", "verbose", "debug", "silly"])
    sdkLogger[level] = (msg) => {
      process.stderr.write(JSON.stringify({ level, msg: String(msg?.message ?? msg), source: "graph" }) + "\\n");
      return sdkLogger;
    };
  sdkLogger.log = (level, msg) => (sdkLogger[level] ?? sdkLogger.info)(msg);
  sdkLogger.child = () => sdkLogger;
  globalThis[SDK_LOGGER] = sdkLogger;
}
const firstLine = (e) => {
  const text = e instanceof Error ? e.message || e.name : String(e);
  return text.split("\\n").map((l) => l.trim()).find(Boolean) || "unknown error";
};
const isCompiled = (g) => g != null && (typeof g === "object" || typeof g === "function") &&
  typeof g.invoke === "function" && (typeof g.getGraphAsync === "function" || typeof g.getGraph === "function");
const isBuilder = (g) => g != null && typeof g === "object" && typeof g.compile === "function";
for (const job of jobs) {
  if (job.auth) {
    // langgraph.json auth.path: its export must be an Auth of @langchain/langgraph-sdk/auth.
    try {
      const a = (await import(pathToFileURL(job.path).href))[job.export_name];
      const cache = a?.["~handlerCache"];
      say(cache && typeof cache === "object" ? { auth: "ok" } : { auth: "export " + job.export_name + " is not an Auth of @langchain/langgraph-sdk/auth" });
    } catch (e) {
      say({ auth: "import failed: " + firstLine(e) });
    }
    continue;
  }
  const fail = (reason) => say({ graph_id: job.graph_id, fail: reason });
  say({ start: job.graph_id });
  let mod;
  try {
    mod = await import(pathToFileURL(job.path).href);
  } catch (e) {
    fail("import failed: " + firstLine(e));
    continue;
  }
  if (!(job.export_name in mod) || mod[job.export_name] === undefined) {
    fail("export " + job.export_name + " not found");
    continue;
  }
  let g = mod[job.export_name];
  let step = "factory";
  try {
    if (typeof g === "function" && !isCompiled(g)) g = await g({ configurable: {} });
    g = await g;
    step = "compile";
    if (!isCompiled(g) && isBuilder(g)) g = await g.compile();
    if (!isCompiled(g)) {
      fail("not a graph");
      continue;
    }
    step = "getGraph";
    const drawn = typeof g.getGraphAsync === "function" ? await g.getGraphAsync() : await g.getGraph();
    const nodes = Object.values(drawn.nodes).map((n) => String(n.id)).filter((id) => id !== "__start__" && id !== "__end__");
    say({ graph_id: job.graph_id, nodes });
  } catch (e) {
    fail(step + " failed: " + firstLine(e));
  }
}
say({ done: true });
process.exit(0);
`;

/** The smoke test's process: the runtime's memory, a minute of CPU. */
const SMOKE_LIMITS: SandboxLimits = {
  memoryMb: 1024,
  cpuSeconds: 60,
  openFiles: 1024,
  scratchMb: 64,
  tasks: 256,
};

export async function smokeTestGraphs(opts: {
  artifactDir: string;
  manifest: ArtifactManifest;
  env: Record<string, string>;
  timeoutMs?: number;
  /** The deployment's workspace: on a host without the OS sandbox only the bootstrap one's code runs. */
  tenant?: string;
  /** Whose code it is (its runtime's sandbox owner, `runtime:<deployment>`): its host uid when root. */
  owner?: string;
}): Promise<GraphInfo[]> {
  const refusal = opts.tenant === undefined ? undefined : unsandboxedRefusal(opts.tenant);
  if (refusal) throw new DeployError(refusal);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const artifactDir = path.resolve(opts.artifactDir);
  const { jobs, auth, childJobs } = smokeJobs(artifactDir, opts.manifest);
  // Deployment secrets must not show up in a message, even when a graph puts one into an error.
  const redact = redactor(Object.values(opts.env));
  const env: Record<string, string> = { NODE_ENV: processEnvironment().NODE_ENV ?? "production" };
  Object.assign(env, opts.manifest.env ?? {}, opts.env);
  const child = await startSmokeProcess(artifactDir, childJobs, env, opts.owner ?? `smoke:${artifactDir}`);
  const reports = await readReports(child, timeoutMs);
  const { nodes, graphFailures, failures } = reports;
  // A hung or exited graph process leaves the rest untested: that fails the deploy, with the failures so far.
  if (failures.length)
    throw new DeployError(
      redact([...[...graphFailures].map(([id, why]) => `graph ${id}: ${why}`), ...failures].join("\n")),
    );
  // Without its auth a deployment with custom auth would let nobody in (or, worse, be mistaken for an open one).
  if (auth && reports.authResult !== "ok")
    throw new DeployError(redact(`auth.path (${auth.file}): ${reports.authResult ?? "not checked"}`));
  return someGraphLoads(
    jobs.map((j) => {
      const error = graphFailures.get(j.graph_id);
      return {
        graph_id: j.graph_id,
        export_name: j.export_name,
        nodes: nodes.get(j.graph_id) ?? [],
        ...(error ? { error: redact(error) } : {}),
      };
    }),
  );
}

/** What the child imports: each graph's file (and the auth's), each inside the artifact. */
function smokeJobs(artifactDir: string, manifest: ArtifactManifest) {
  const entries = Object.entries(manifest.graphs);
  if (entries.length === 0) throw new DeployError("the artifact holds no graphs");
  const jobs = entries.map(([graph_id, g]) => {
    const file = path.resolve(artifactDir, g.file);
    if (!isWithin(artifactDir, file))
      throw new DeployError(`graph ${graph_id}: ${g.file} is outside the artifact`);
    return { graph_id, export_name: g.export_name, path: file };
  });
  const auth = manifest.auth;
  const authFile = auth && path.resolve(artifactDir, auth.file);
  if (authFile && !isWithin(artifactDir, authFile))
    throw new DeployError(`auth: ${auth!.file} is outside the artifact`);
  const childJobs = authFile
    ? [...jobs, { auth: true, export_name: auth!.export_name, path: authFile }]
    : jobs;
  return { jobs, auth, childJobs };
}

/**
 * The graph's code runs sandboxed like in its runtime (the OS sandbox, without network; Node's permission model
 * inside): it reads its artifact, writes a scratch folder only.
 */
async function startSmokeProcess(
  artifactDir: string,
  childJobs: unknown[],
  env: Record<string, string>,
  owner: string,
) {
  const sandbox = osSandbox().available;
  const scratch = sandbox ? SANDBOX_SCRATCH : await mkdtemp(path.join(tmpdir(), "smoke-"));
  const nodeArgs = [
    ...sandboxFlags({ read: [artifactDir, scratch], write: [scratch] }),
    "--input-type=module",
    "-e",
    CHILD,
    "--",
    JSON.stringify(childJobs),
  ];
  if (sandbox) shareWithSandbox(owner, artifactDir);
  const cmd = sandbox
    ? sandboxedCommand([await realpath(sandboxNode()), ...nodeArgs], {
        owner,
        readOnly: [artifactDir],
        cwd: artifactDir,
        env,
        limits: SMOKE_LIMITS,
        seccompFd: 4,
      })
    : {
        command: sandboxNode(),
        args: nodeArgs,
        env: { ...env, TMPDIR: scratch, HOME: scratch },
        seccomp: undefined,
      };
  const child = spawn(cmd.command, cmd.args, {
    cwd: artifactDir,
    env: cmd.env,
    stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
  });
  tolerateStdioErrors(child);
  const fd4 = child.stdio[4] as NodeJS.WritableStream;
  if (cmd.seccomp) fd4.end(cmd.seccomp);
  else fd4.end();
  if (!sandbox) child.on("close", () => void rm(scratch, { recursive: true, force: true }));
  return child;
}

/** What the child reported on fd 3 until it exited (or was killed at `timeoutMs`), and what went wrong. */
async function readReports(child: ChildProcess, timeoutMs: number) {
  const nodes = new Map<string, string[]>();
  const graphFailures = new Map<string, string>();
  const failures: string[] = [];
  let authResult: string | undefined;
  let current: string | undefined;
  let done = false;
  let stderrTail = "";
  let buffered = "";
  const onReport = (line: string) => {
    let msg: {
      start?: string;
      graph_id?: string;
      nodes?: string[];
      fail?: string;
      done?: boolean;
      auth?: string;
    };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.start) current = msg.start;
    if (msg.graph_id && msg.nodes) nodes.set(msg.graph_id, msg.nodes);
    if (msg.graph_id && msg.fail) graphFailures.set(msg.graph_id, msg.fail);
    if (msg.auth) authResult = msg.auth;
    if (msg.done) done = true;
  };
  (child.stdio[3] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => {
    const lines = (buffered + chunk.toString("utf8")).split("\n");
    buffered = lines.pop() ?? "";
    for (const l of lines) onReport(l);
  });
  child.stdout?.resume();
  child.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-4000);
  });

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  const code = await new Promise<number | null>((resolve) => {
    child.on("error", () => resolve(null));
    child.on("close", (c) => resolve(c));
  });
  clearTimeout(timer);
  if (buffered) onReport(buffered);

  const who = current ? `graph ${current}` : "smoke test";
  if (timedOut)
    failures.push(
      `${who}: timed out after ${Math.round(timeoutMs / 100) / 10} s (importing or compiling hangs)`,
    );
  else if (!done) {
    const last = stderrTail
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .filter((l) => !l.startsWith("at ") && !l.startsWith("Node.js v"))
      .pop();
    failures.push(`${who}: the graph process exited (code ${code ?? "none"})${last ? `: ${last}` : ""}`);
  }
  return { nodes, graphFailures, failures, authResult };
}
