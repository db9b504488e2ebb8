import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { Agent, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fromRecord } from "../../shared/agent/deployment/deployment.ts";
import type { RuntimeHost } from "../../shared/agent/hosting/runtime-host.ts";
import { sweepRuns } from "../../shared/agent/runs/sweeper.ts";
import { sendRunWebhook } from "../../shared/agent/runs/webhook.ts";
import { preludeOf, type RuntimeEvent } from "../../shared/agent/runtime/lambda-protocol.ts";
import { sealRuntimeEnv } from "../../shared/agent/runtime/sealed-env.ts";
import type { RuntimeConfig } from "../../shared/agent/runtime/serve.ts";
import { materializeArtifact } from "../../shared/build/artifacts.ts";
import type { ArtifactManifest } from "../../shared/build/bundle.ts";
import { tolerateStdioErrors } from "../../shared/build/exec.ts";
import { config } from "../../shared/config.ts";
import { egressRules } from "../../shared/containment/egress.ts";
import { runtimeFunctionName, runtimePolicy } from "../../shared/containment/runtime-policy.ts";
import {
  giveToSandbox,
  limitThatKilled,
  osSandbox,
  runtimeSandboxOwner,
  SANDBOX_SCRATCH,
  type SandboxLimits,
  sandboxedCommand,
  sandboxFlags,
  shareWithSandbox,
  unsandboxedRefusal,
} from "../../shared/containment/sandbox.ts";
import { SANDBOX_NODE_MAJOR, sandboxNode, sandboxNodeMajor } from "../../shared/containment/sandbox-node.ts";
import { deploymentOutputLogger, OutputFramer } from "../../shared/containment/sandbox-output.ts";
import { unsealSecrets } from "../../shared/control/deployments.ts";
import { appendLog } from "../../shared/control/revisions.ts";
import { HttpError, NotFound, ServiceUnavailable } from "../../shared/errors.ts";
import { json } from "../../shared/http/event.ts";
import { bindLogContext, logger, withLogContext } from "../../shared/log.ts";
import { runs } from "../../shared/records/agent.ts";
import { recentDeploymentRecord } from "../../shared/records/control.ts";
import { jsonResult, write } from "./gateway.ts";
import { BodyTooLarge, callSocket, readBody, StartupError } from "./http-util.ts";
import type { StreamingFunction } from "./lambda-stream.ts";
import {
  createPolicyProxy,
  LOCAL_ACCOUNT,
  localKmsKeys,
  localRuntimeScope,
  mintRuntimeCredentials,
  type PolicyProxyOptions,
} from "./policy-proxy/index.ts";
import { bundleRuntime } from "./runtime-bundle.ts";
import {
  type LocalRuntimeStart,
  PLATFORM_SOCKET,
  RUNTIME_SOCKET,
  RUNTIME_TOKEN_HEADER,
} from "./runtime-protocol.ts";
import { servePlatformSocket } from "./runtime-socket.ts";
import { deploymentOfFunction, runtimeAnswer } from "./runtime-stream.ts";
import { localTraceTransport } from "./runtime-traces.ts";

// The local cloud's agent runtimes: one child process per deployment (its active revision), started at first
// use or when a revision goes live, stopped when the deployment is deleted, replaced when a newer revision
// goes live, restarted after a crash (its runs retried at once from their last checkpoint). The router bundle
// (functions/agent/router.ts) authenticates each agent-server request and invokes the deployment's runtime
// function through the local Lambda emulator, which hands it here (`streaming`, `invoked`).
//
// Containment of a child: it runs in the OS sandbox (shared/containment/sandbox.ts: bubblewrap namespaces, read-only
// binds of Node, the runtime bundle and its revision's artifact, a tmpfs scratch, seccomp, rlimits). Its only
// ways out are two Unix sockets in a folder of its own: runtime.sock, where it takes the requests the gateway
// forwards, and platform.sock (runtime-socket.ts), where its AWS calls meet the policy proxy, its traces go
// into its deployment's project and its outbound HTTP(S) meets the egress proxy. Its environment is the
// deployment's secrets and langgraph.json env; the platform's settings for it (tables, its own credentials) come
// on stdin and never enter its process.env. On a host without the sandbox only the bootstrap workspace's
// deployments run (under Node's permission model alone), unless the operator sets AGENT_UNSANDBOXED=1.
export interface RuntimeSpec {
  config: RuntimeConfig;
  /** The deployment's secrets and langgraph.json env. */
  env: Record<string, string>;
}

interface Running {
  key: string;
  spec: RuntimeSpec;
  child: ChildProcess;
  /** Its socket folder (runtime.sock, platform.sock). */
  socketDir: string;
  platform: Server;
  token: string;
  agent: Agent;
  ready: Promise<void>;
  startedAt: number;
  /** Spawn → first health answer (graphs imported). */
  coldStartMs?: number;
  stopping?: boolean;
  /** The last of its stderr, to tell which limit stopped it. */
  stderrTail: string;
}

/** How long a stopping runtime gets to send its last traces and exit before it is killed. */
const KILL_AFTER_MS = 5000;

/** The platform's settings a local runtime is handed (sealed in it; never a secret of the platform). */
const PASSED_SETTINGS = [
  "AWS_REGION",
  "TABLE_PREFIX",
  "TABLE_MAIN",
  "TABLE_RUNS",
  "TABLE_CHECKPOINTS",
  "PLATFORM_LOCAL",
  "PLATFORM_BUCKET",
  "AGENT_RUN_WORKER",
  "AGENT_TRACE_BODY_BYTES",
  "AGENT_RUN_LEASE_MS",
  "AGENT_TRACE_FLUSH_MS",
  "AGENT_WAIT_KEEPALIVE_MS",
  "LOG_LEVEL",
  "PLATFORM_COUNT_REQUESTS",
] as const;

/** Hosts the runtime's AWS clients name: any name would do, the connection is the platform socket. */
const SANDBOX_AWS_ENDPOINTS = {
  AWS_ENDPOINT_URL_DYNAMODB: "http://dynamodb.platform.sandbox",
  AWS_ENDPOINT_URL_S3: "http://s3.platform.sandbox",
  AWS_ENDPOINT_URL_KMS: "http://kms.platform.sandbox",
};

/** Below this heap a runtime cannot load its bundle and graphs (192 MB did not start one). */
const RUNTIME_MEMORY_FLOOR_MB = 256;

const sandboxLimits = (): SandboxLimits => ({
  memoryMb: config.sandbox.memoryMb,
  cpuSeconds: config.sandbox.cpuSeconds,
  openFiles: config.sandbox.openFiles,
  scratchMb: config.sandbox.scratchMb,
  tasks: config.sandbox.tasks,
});

export class LocalRuntimes implements RuntimeHost {
  private readonly current = new Map<string, Running>();
  /** Runtimes being started, by `<deployment>@<revision>`. */
  private readonly starting = new Map<string, Promise<Running>>();
  private stopped = false;
  /** Runtimes of a replaced revision, finishing their runs. */
  private readonly retiring = new Set<Running>();

  constructor(
    private readonly opts: {
      dataDir: string;
      /** Where the runtimes' AWS calls go once checked (DynamoDB Local, s3rver, the local KMS), with their tokens. */
      upstream: () => PolicyProxyOptions["upstream"];
    },
  ) {}

  /** Says at start whether deployments' code runs in the OS sandbox, and what a host without it gives up. */
  announce(): void {
    if (config.sandbox.memoryMb < RUNTIME_MEMORY_FLOOR_MB)
      throw new StartupError(
        `AGENT_RUNTIME_MEMORY_MB is ${config.sandbox.memoryMb}: a runtime needs at least ${RUNTIME_MEMORY_FLOOR_MB} MB to load its code`,
      );
    if (sandboxNodeMajor() !== SANDBOX_NODE_MAJOR)
      logger.warn(
        `agent runtimes run on this machine's Node.js ${process.versions.node}, not ${SANDBOX_NODE_MAJOR} (the Lambda runtime's): it was not fetched (npm run postinstall fetches it)`,
      );
    const s = osSandbox();
    if (s.available) return;
    if (config.sandbox.allowUnsandboxed)
      logger.warn(
        `WARNING: agent runtimes run WITHOUT the OS sandbox (AGENT_UNSANDBOXED=1): ${s.reason}. Every workspace's deployments run with only Node's permission model between them and this machine's loopback services`,
      );
    else
      logger.warn(
        `agent runtimes: no OS sandbox on this host (${s.reason}); only the bootstrap workspace's deployments will run. Set AGENT_UNSANDBOXED=1 to run every workspace's without it`,
      );
  }

  /** The runtime bundle is built in the background at start-up, so the first deployment does not wait. */
  prepare(): void {
    // Scratch folders a killed platform's runtimes left behind.
    rmSync(join(this.runtimeDir, "scratch"), { recursive: true, force: true });
    void bundleRuntime().catch((err: unknown) => {
      // A platform stopping while the bundle builds stops esbuild too: not a failure worth a line.
      if (!this.stopped) logger.error("runtime bundle failed", { error: err });
    });
  }

  private get runtimeDir() {
    return join(resolve(this.opts.dataDir), "runtime");
  }

  /** What the deployment's active revision needs to run: 404 for another workspace's, 503 when none is live. */
  private async specFor(tenant: string, deploymentId: string): Promise<RuntimeSpec> {
    const d = await recentDeploymentRecord(tenant, deploymentId);
    if (!d) throw new NotFound("Deployment not found");
    const revision = d.active_revision_id;
    const prefix = d.active_artifact_prefix;
    if (!revision || !prefix) throw new ServiceUnavailable("The deployment has no deployed revision yet");
    const refusal = unsandboxedRefusal(tenant);
    if (refusal) throw new ServiceUnavailable(refusal);
    // The revision that runs already: nothing to read again.
    const running = this.current.get(deploymentId);
    if (running?.key === `${deploymentId}@${revision}`) return running.spec;
    const dir = await materializeArtifact(prefix);
    const { tenant_id, deployment_id, revision_id, graphs, tracing_project_id } = fromRecord(d);
    return {
      config: { tenant_id, deployment_id, revision_id, graphs, tracing_project_id, artifact_dir: dir },
      env: { ...manifestEnv(dir), ...(await unsealSecrets(d)) },
    };
  }

  /** The deployment's runtime for its active revision: started when missing, the older one retired. */
  async ensure(tenant: string, deploymentId: string): Promise<Running> {
    if (this.stopped) throw new ServiceUnavailable("The local cloud is stopping");
    const spec = await this.specFor(tenant, deploymentId);
    const key = `${deploymentId}@${spec.config.revision_id}`;
    let r = this.current.get(deploymentId);
    if (r?.key !== key || r.child.exitCode !== null || r.child.signalCode !== null) {
      // One start per revision, however many requests arrive while it starts.
      let starting = this.starting.get(key);
      if (!starting) {
        if (r && r.key !== key) this.retire(r);
        starting = this.start(key, spec).then((started) => {
          this.current.set(deploymentId, started);
          return started;
        });
        const settle = () => this.starting.delete(key);
        starting.then(settle, settle);
        this.starting.set(key, starting);
      }
      r = await starting;
    }
    await r.ready;
    return r;
  }

  private async start(key: string, spec: RuntimeSpec): Promise<Running> {
    const bundle = await bundleRuntime();
    const { deployment_id } = spec.config;
    // Its sockets live in a folder of its own, short enough for a socket path, that only it and we can reach.
    const socketDir = mkdtempSync(join(tmpdir(), "ap-rt-"));
    const token = randomBytes(32).toString("hex");
    const workerId = randomUUID();
    const r: Running = {
      key,
      spec,
      child: undefined as unknown as ChildProcess,
      socketDir,
      platform: undefined as unknown as Server,
      token,
      agent: new Agent({ keepAlive: true, maxSockets: 256 }),
      ready: Promise.resolve(),
      startedAt: performance.now(),
      stderrTail: "",
    };
    // Its AWS calls are signed with credentials made for it alone and checked against the very policy its role
    // has in AWS (shared/containment/runtime-policy.ts) before they reach DynamoDB Local or s3rver.
    const credentials = mintRuntimeCredentials();
    const scope = localRuntimeScope(spec.config.tenant_id, deployment_id);
    const principal = {
      ...credentials,
      arn: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${runtimeFunctionName(deployment_id)}/${deployment_id}`,
      policy: runtimePolicy(scope),
    };
    // Its own environment goes the AWS way: sealed for its deployment, opened by it at start through the proxy.
    const sealedEnv = await sealRuntimeEnv(
      spec.config.tenant_id,
      deployment_id,
      spec.config.revision_id,
      spec.env,
    );
    r.platform = await servePlatformSocket(join(socketDir, PLATFORM_SOCKET), {
      aws: createPolicyProxy({
        principal: (id) => (id === principal.accessKeyId ? principal : undefined),
        upstream: this.opts.upstream(),
        region: config.region,
        kms: localKmsKeys(),
      }),
      traces: localTraceTransport(r.spec.config),
      webhook: (req, res) => this.runWebhook(r, req, res),
      egress: egressRules(),
    });
    const settings: Record<string, string> = {
      ...SANDBOX_AWS_ENDPOINTS,
      PLATFORM_SOCKET: join(socketDir, PLATFORM_SOCKET),
      AGENT_RUNTIME_SECRETS: JSON.stringify(sealedEnv),
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    };
    for (const name of PASSED_SETTINGS) {
      const text = config.text(name);
      if (text) settings[name] = text;
    }
    const env: Record<string, string> = {
      NODE_ENV: "production",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    };
    // A machine whose TLS is inspected names its CA here; a graph's HTTPS through the egress proxy needs it.
    if (config.localCloud.extraCaCerts) env.NODE_EXTRA_CA_CERTS = config.localCloud.extraCaCerts;
    const limits = sandboxLimits();
    const sandbox = osSandbox().available;
    const scratch = sandbox
      ? SANDBOX_SCRATCH
      : join(this.runtimeDir, "scratch", `${deployment_id}-${randomUUID().slice(0, 8)}`);
    if (!sandbox) mkdirSync(scratch, { recursive: true });
    const nodeArgs = [
      `--max-old-space-size=${limits.memoryMb}`,
      ...sandboxFlags({
        read: [
          // The bundle's file, not its folder: DATA_DIR/runtime also holds every runtime's description (token).
          bundle.file,
          spec.config.artifact_dir,
          scratch,
          socketDir,
          ...(env.NODE_EXTRA_CA_CERTS ? [env.NODE_EXTRA_CA_CERTS] : []),
        ],
        write: [scratch, socketDir],
      }),
      bundle.file,
    ];
    // Its socket folder (platform.sock in it) is its sandbox's uid's, the only folder it may write outside.
    const owner = runtimeSandboxOwner(deployment_id);
    if (sandbox) {
      giveToSandbox(owner, [socketDir]);
      shareWithSandbox(owner, spec.config.artifact_dir);
    }
    const cmd = sandbox
      ? sandboxedCommand([realpathSync(sandboxNode()), ...nodeArgs], {
          owner,
          readOnly: [bundle.file, spec.config.artifact_dir],
          readWrite: [socketDir],
          cwd: spec.config.artifact_dir,
          env,
          limits,
        })
      : { command: sandboxNode(), args: nodeArgs, env: { ...env, TMPDIR: scratch, HOME: scratch } };
    const child = spawn(cmd.command, cmd.args, {
      cwd: spec.config.artifact_dir,
      env: cmd.env,
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      // A process group of its own: a signal to the platform's group (Ctrl-C, a service manager's stop) leaves
      // it to the platform, which asks it to send its traces first; it still dies with the platform.
      detached: true,
    });
    r.child = child;
    tolerateStdioErrors(child);
    const fd3 = child.stdio[3] as NodeJS.WritableStream;
    if ("seccomp" in cmd && cmd.seccomp) fd3.end(cmd.seccomp);
    else fd3.end();
    // Its output reaches the platform's log framed (sandbox-output.ts), in no request's log context.
    const output = new OutputFramer(
      { lineChars: config.sandbox.outputLineChars, linesPerSecond: config.sandbox.outputLinesPerSecond },
      withLogContext({}, () => bindLogContext(deploymentOutputLogger(deployment_id))),
    );
    child.stdout!.on("data", (chunk: Buffer) => output.write("stdout", chunk));
    child.stderr!.on("data", (chunk: Buffer) => {
      output.write("stderr", chunk);
      r.stderrTail = (r.stderrTail + chunk.toString("utf8")).slice(-4000);
    });
    const start: LocalRuntimeStart = {
      runtime: { ...spec.config, worker_id: workerId },
      token,
      socket_dir: socketDir,
      settings,
    };
    child.stdin!.write(`${JSON.stringify(start)}\n`);
    child.stdin!.on("error", () => {});
    r.ready = this.waitReady(r);
    r.ready.catch(() => this.retire(r));
    child.on("close", () => output.end());
    child.on("exit", (code, signal) => {
      r.agent.destroy();
      r.platform.close();
      rmSync(socketDir, { recursive: true, force: true });
      if (!sandbox) rmSync(scratch, { recursive: true, force: true });
      if (this.current.get(deployment_id) === r) this.current.delete(deployment_id);
      if (r.stopping || this.stopped) return;
      const limit = limitThatKilled({ code, signal, stderrTail: r.stderrTail }, limits);
      logger.warn("agent runtime exited", { deployment_id, code, signal, ...(limit ? { limit } : {}) });
      if (limit) void this.noteLimit(spec, limit);
      // Its runs are retried now (from their last checkpoint), which starts a runtime again.
      void sweepRuns(this, Date.now(), {
        only: { tenant: spec.config.tenant_id, deployment: deployment_id },
        deadWorker: workerId,
        ...(limit ? { cause: limit } : {}),
      }).catch((err) => logger.error("retrying a crashed runtime's runs failed", { error: err }));
    });
    return r;
  }

  /** A limit stopped the runtime: its revision's deploy log says so (the run's error does too, via the sweep). */
  private async noteLimit(spec: RuntimeSpec, limit: string): Promise<void> {
    const { tenant_id, deployment_id, revision_id } = spec.config;
    await appendLog(
      { tenant_id, deployment_id, id: revision_id },
      "deploy",
      `Runtime stopped: ${limit}`,
    ).catch((err) => logger.warn("could not note a runtime's limit in its deploy log", { error: err }));
  }

  private async waitReady(r: Running): Promise<void> {
    for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
      if (r.child.exitCode !== null || r.child.signalCode !== null) {
        const exit = { code: r.child.exitCode, signal: r.child.signalCode, stderrTail: r.stderrTail };
        const limit = limitThatKilled(exit, sandboxLimits());
        throw new ServiceUnavailable(
          `The deployment's runtime exited while starting${limit ? `: ${limit}` : ""}`,
        );
      }
      const res = await this.call(r, "GET", "/__runtime/health").catch(() => undefined);
      if (res?.status === 200) {
        r.coldStartMs = performance.now() - r.startedAt;
        if (config.countRequests !== undefined) this.describe(r, JSON.parse(res.text).pid);
        return;
      }
      if (res && res.status !== 404)
        throw new ServiceUnavailable(`The deployment's runtime answered ${res.status}`);
      if (performance.now() - r.startedAt > 120_000)
        throw new ServiceUnavailable("The deployment's runtime did not start within 120 s");
      await new Promise((done) => setTimeout(done, delay));
    }
  }

  /**
   * Diagnostics mode (PLATFORM_COUNT_REQUESTS=1, benchmarks): where a runtime listens (its socket), its token,
   * pids and cold start, in DATA_DIR/runtime/<deployment>.json (the platform's data folder, which no runtime can
   * read). `pid` is the process the platform started (the sandbox's launcher: its tree holds the runtime).
   */
  private describe(r: Running, innerPid: number): void {
    const { deployment_id } = r.spec.config;
    // The runtime bundle no longer lives here (.cache/agent-runtime): the folder is made for the descriptions.
    mkdirSync(this.runtimeDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(this.runtimeDir, `${deployment_id}.json`),
      JSON.stringify({
        deployment_id,
        socket: join(r.socketDir, RUNTIME_SOCKET),
        token: r.token,
        tenant_id: r.spec.config.tenant_id,
        pid: r.child.pid,
        inner_pid: innerPid,
        cold_start_ms: r.coldStartMs,
      }),
      { mode: 0o600 },
    );
  }

  /** A request of the platform's own to a runtime. */
  private call(r: Running, method: string, path: string, body?: unknown) {
    return callSocket(join(r.socketDir, RUNTIME_SOCKET), method, path, {
      body,
      agent: r.agent,
      headers: { [RUNTIME_TOKEN_HEADER]: r.token },
    });
  }

  /**
   * Deployments' runtime functions as the local Lambda emulator serves the router's InvokeWithResponseStream
   * (lambda-stream.ts): the deployment's runtime, started if need be, answers the event's request
   * (runtime-stream.ts). undefined for a name that is no runtime function's.
   */
  streaming: StreamingFunction = (name, _qualifier, payload, signal) => {
    const deploymentId = deploymentOfFunction(name);
    return deploymentId === undefined ? undefined : this.answer(deploymentId, payload, signal);
  };

  private async *answer(deploymentId: string, payload: unknown, signal: AbortSignal): AsyncGenerator<Buffer> {
    const e = payload as RuntimeEvent | undefined;
    if (e?.kind !== "http" || typeof e.tenant_id !== "string" || typeof e.event !== "object")
      throw new Error("A local runtime streams the answers of http events only");
    let r: Running;
    try {
      r = await this.ensure(e.tenant_id, deploymentId);
    } catch (err) {
      // What keeps a runtime from running here (no sandbox, a start that failed) is its answer, as the gateway gave it.
      if (!(err instanceof HttpError)) throw err;
      const result = json(err.status, err.body(), err.headers());
      yield Buffer.from(preludeOf(result));
      yield Buffer.from(result.body ?? "");
      return;
    }
    yield* runtimeAnswer(
      { socketPath: join(r.socketDir, RUNTIME_SOCKET), agent: r.agent, token: r.token },
      e,
      signal,
    );
  }

  /** Deployments' runtime functions invoked asynchronously: the drains the router (or a sweep) starts. */
  invoked = (name: string): ((event: unknown) => Promise<void>) | undefined => {
    const deploymentId = deploymentOfFunction(name);
    if (deploymentId === undefined) return undefined;
    return async (event) => {
      const e = event as Partial<Extract<RuntimeEvent, { kind: "drain" }>> | undefined;
      if (
        e?.kind !== "drain" ||
        e.deployment_id !== deploymentId ||
        typeof e.tenant_id !== "string" ||
        typeof e.thread_id !== "string"
      )
        throw new Error(`${name} takes drain events of its own deployment only`);
      await this.kick(e.tenant_id, deploymentId, e.thread_id);
    };
  };

  async kick(tenantId: string, deploymentId: string, threadId: string): Promise<void> {
    const r = await this.ensure(tenantId, deploymentId);
    const res = await this.call(r, "POST", "/__runtime/kick", { thread_id: threadId });
    if (res.status !== 202) throw new Error(`the runtime refused a kick: ${res.status} ${res.text}`);
  }

  async activated(tenantId: string, deploymentId: string): Promise<void> {
    await this.ensure(tenantId, deploymentId);
  }

  async remove(_tenantId: string, deploymentId: string): Promise<void> {
    const r = this.current.get(deploymentId);
    this.current.delete(deploymentId);
    if (r) await this.kill(r);
  }

  /** A newer revision took over: the old runtime finishes its runs (SIGTERM drains) and exits. */
  // Stops are asked over the runtime's socket (signals do not cross the sandbox's pid namespace); one that
  // does not exit in time is killed with its sandbox.
  private retire(r: Running): void {
    r.stopping = true;
    this.retiring.add(r);
    r.child.once("exit", () => this.retiring.delete(r));
    void this.call(r, "POST", "/__runtime/stop", { mode: "drain" }).catch(() => r.child.kill("SIGKILL"));
    setTimeout(() => r.child.kill("SIGKILL"), 40_000).unref();
  }

  private async kill(r: Running): Promise<void> {
    r.stopping = true;
    if (r.child.exitCode !== null || r.child.signalCode !== null) return;
    const gone = new Promise((done) => r.child.once("exit", done));
    // It sends the traces it still holds and exits; a runtime that does not within seconds is killed.
    void this.call(r, "POST", "/__runtime/stop", { mode: "now" }).catch(() => r.child.kill("SIGKILL"));
    const killer = setTimeout(() => r.child.kill("SIGKILL"), KILL_AFTER_MS);
    await gone;
    clearTimeout(killer);
  }

  /**
   * Traces a runtime sends (POST /__platform/runtime-traces on its own platform socket): ingested into its
   * deployment's tracing project, whatever project the runs name; a deployment without one sends nothing.
   */
  /**
   * A finished run's webhook, asked for by its runtime with the run's ids and outcome (values, error message): the
   * URL and the run are the run's record's, the body is built here (sendRunWebhook) and goes out under the same
   * address policy as the runtime's own egress. A URL or body the runtime hands in is never used. The answer says
   * the class of a failure only.
   */
  private async runWebhook(r: Running, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ask = await jsonBody<{ thread_id?: unknown; run_id?: unknown; values?: unknown; error?: unknown }>(
      req,
      res,
      2 * 1024 * 1024,
    );
    if (!ask) return;
    const { thread_id, run_id, values, error } = ask;
    if (
      typeof thread_id !== "string" ||
      typeof run_id !== "string" ||
      (error !== undefined && typeof error !== "string")
    )
      return write(res, jsonResult(422, { detail: "thread_id and run_id are required; error is a message" }));
    const { tenant_id, deployment_id } = r.spec.config;
    const run = await runs.get({ scope: `${tenant_id}#${deployment_id}`, thread: thread_id, run: run_id });
    if (!run) return write(res, jsonResult(404, { detail: "No such run" }));
    const failure = await sendRunWebhook(run, { values: values ?? null, ...(error ? { error } : {}) });
    return write(res, jsonResult(200, { failure: failure ?? null }));
  }

  /** Stops every runtime: running, retiring, and starting ones once their process exists. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    const starting = [...this.starting.values()].map((p) => p.catch(() => undefined));
    await Promise.all([...this.current.values(), ...this.retiring].map((r) => this.kill(r)));
    await Promise.all((await Promise.all(starting)).map((r) => r && this.kill(r)));
    this.current.clear();
  }
}

function manifestEnv(dir: string): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
  return manifest.env ?? {};
}

/** A platform-socket request's JSON object body, or undefined with the refusal written (413, or 422 not JSON). */
async function jsonBody<T extends object>(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<T | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse((await readBody(req, limit)).toString("utf8"));
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      write(res, jsonResult(413, { detail: `The body is larger than ${limit} bytes` }));
      return undefined;
    }
  }
  if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as T;
  write(
    res,
    jsonResult(422, { detail: [{ loc: ["body"], msg: "Not a JSON object", type: "json_invalid" }] }),
  );
  return undefined;
}
