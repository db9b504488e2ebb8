import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { Agent, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { deploymentsHost } from "../../shared/agent/hosting/host.ts";
import { sweepRuns } from "../../shared/agent/runs/sweeper.ts";
import { sendRunWebhook } from "../../shared/agent/runs/webhook.ts";
import { preludeOf, type RuntimeEvent } from "../../shared/agent/runtime/lambda-protocol.ts";
import type { RuntimeConfig } from "../../shared/agent/runtime/serve.ts";
import { s3 } from "../../shared/aws/clients.ts";
import { tolerateStdioErrors } from "../../shared/build/exec.ts";
import { unzip } from "../../shared/build/zip.ts";
import { config } from "../../shared/config.ts";
import { egressRules } from "../../shared/containment/egress.ts";
import { privateDir } from "../../shared/containment/private-dir.ts";
import type { PolicyDocument } from "../../shared/containment/runtime-policy.ts";
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
import {
  nodeMajorOfRuntime,
  SANDBOX_NODE_MAJOR,
  sandboxNode,
  sandboxNodeMajor,
} from "../../shared/containment/sandbox-node.ts";
import { deploymentOutputLogger, OutputFramer } from "../../shared/containment/sandbox-output.ts";
import { appendLog } from "../../shared/control/revisions.ts";
import { HttpError, ServiceUnavailable } from "../../shared/errors.ts";
import { json } from "../../shared/http/event.ts";
import { bindLogContext, logger, withLogContext } from "../../shared/log.ts";
import { runs } from "../../shared/records/agent.ts";
import type { LambdaFunctions, LocalIam } from "./control-plane/index.ts";
import type { FunctionVersion } from "./control-plane/lambda-functions.ts";
import { jsonResult, write } from "./gateway.ts";
import { BodyTooLarge, callSocket, readBody, StartupError } from "./http-util.ts";
import type { StreamingFunction } from "./lambda-stream.ts";
import {
  createPolicyProxy,
  LOCAL_ACCOUNT,
  localKmsKeys,
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
import { runtimeAnswer } from "./runtime-stream.ts";
import { localTraceTransport } from "./runtime-traces.ts";
import { localStorageBudget, storageUsageFile } from "./storage-budget.ts";

// The local Lambda service's executor of deployments' runtime functions: a function created through Lambda's API
// (CreateFunction by the deploy step, lambda-host.ts) runs, one child process per version in use, from what its
// version stores — its code (the zip in S3, unpacked), its environment, its memory, its role — as Lambda would run it.
// A version's process starts at its first invocation (the deploy step's health check), serves the router's
// InvokeWithResponseStream (`streaming`) and the drains' asynchronous invocations (`invoked`), retires once a newer
// version of its function serves, stops when its version or function is deleted, and is started again after a
// crash (its runs retried at once from their last checkpoint).
//
// Containment of a child: it runs in the OS sandbox (shared/containment/sandbox.ts: bubblewrap namespaces, read-only
// binds of Node, the runtime bundle and its code, a tmpfs scratch, seccomp, rlimits). Its only ways out are two Unix
// sockets in a folder of its own: runtime.sock, where it takes the requests the gateway forwards, and platform.sock
// (runtime-socket.ts), where its AWS calls meet the policy proxy under its role's policies (as IAM holds them: the
// inline policies the deploy step put, within the role's boundary), its traces go into its deployment's project and
// its outbound HTTP(S) meets the egress proxy. Its environment is the deployment's secrets and langgraph.json env,
// which it opens itself (sealed by the deploy step); the function's settings and its own credentials come on stdin
// and never enter its process.env. On a host without the sandbox only the bootstrap workspace's deployments run
// (under Node's permission model alone), unless the operator sets AGENT_UNSANDBOXED=1.
export interface RuntimeSpec {
  config: RuntimeConfig;
  /** The function version it runs. */
  fn: {
    name: string;
    version: string;
    role: string;
    memoryMb: number;
    variables: Record<string, string>;
    /** The Node.js major its Runtime names (nodejs24.x: 24). */
    nodeMajor: string;
  };
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

/**
 * The local Lambda service's own environment for a runtime (as Lambda sets AWS_REGION), beneath the function's
 * environment, which sets the rest (its tables, bucket, run worker, log level): sealed in it, never a secret.
 */
const PASSED_SETTINGS = [
  "AWS_REGION",
  "TABLE_PREFIX",
  "TABLE_RUNS",
  "PLATFORM_LOCAL",
  "AGENT_TRACE_BODY_BYTES",
  "AGENT_RUN_LEASE_MS",
  "AGENT_TRACE_FLUSH_MS",
  "AGENT_WAIT_KEEPALIVE_MS",
  "PLATFORM_COUNT_REQUESTS",
] as const;
/** Function variables the executor reads itself rather than hands over as settings. */
const EXECUTOR_VARIABLES = ["AGENT_RUNTIME_CONFIG"];

/** Hosts the runtime's AWS clients name: any name would do, the connection is the platform socket. */
const SANDBOX_AWS_ENDPOINTS = {
  AWS_ENDPOINT_URL_DYNAMODB: "http://dynamodb.platform.sandbox",
  AWS_ENDPOINT_URL_S3: "http://s3.platform.sandbox",
  AWS_ENDPOINT_URL_KMS: "http://kms.platform.sandbox",
};

/** Below this heap a runtime cannot load its bundle and graphs (192 MB did not start one). */
const RUNTIME_MEMORY_FLOOR_MB = 256;

const sandboxLimits = (memoryMb: number): SandboxLimits => ({
  memoryMb,
  cpuSeconds: config.sandbox.cpuSeconds,
  openFiles: config.sandbox.openFiles,
  scratchMb: config.sandbox.scratchMb,
  tasks: config.sandbox.tasks,
});

/** What a runtime is handed on its stdin: the settings it reads, its function's environment, its keys and socket. */
function startSettings(
  spec: RuntimeSpec,
  socketDir: string,
  credentials: { accessKeyId: string; secretAccessKey: string },
): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const name of PASSED_SETTINGS) {
    const text = config.text(name);
    if (text) settings[name] = text;
  }
  // The function's environment (what CreateFunction stored: its tables, its sealed environment's reference, …).
  for (const [name, value] of Object.entries(spec.fn.variables))
    if (value && !EXECUTOR_VARIABLES.includes(name)) settings[name] = value;
  Object.assign(settings, {
    // The local Lambda service keeps its environments alive (AWS freezes them between invocations): its runs
    // execute in the process that took them unless the platform says AGENT_RUN_WORKER=lambda (as AWS runs them).
    AGENT_RUN_WORKER: config.agent.runWorker,
    ...SANDBOX_AWS_ENDPOINTS,
    PLATFORM_SOCKET: join(socketDir, PLATFORM_SOCKET),
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  });
  return settings;
}

export class LocalRuntimes {
  /** Running versions, by `<function>:<version>`. */
  private readonly current = new Map<string, Running>();
  /** Versions being started, by the same key. */
  private readonly starting = new Map<string, Promise<Running>>();
  private stopped = false;
  /** Versions a newer one of their function took over from, finishing their runs. */
  private readonly retiring = new Set<Running>();
  /** What each deployment's runtimes may store through their policy proxies, counted across all its versions. */
  private readonly storage: ReturnType<typeof localStorageBudget>;

  constructor(
    private readonly opts: {
      dataDir: string;
      /** Where the runtimes' AWS calls go once checked (DynamoDB Local, s3rver, the local KMS), with their tokens. */
      upstream: () => PolicyProxyOptions["upstream"];
      /** The local account's functions (what they run) and roles (what their runtimes may do). */
      functions: LambdaFunctions;
      iam: LocalIam;
    },
  ) {
    this.storage = localStorageBudget(storageUsageFile(opts.dataDir));
    // A deleted function (or version) stops running, as Lambda reclaims its environments.
    opts.functions.onDelete((name, version) => {
      for (const r of [...this.current.values()])
        if (r.spec.fn.name === name && (version === undefined || r.spec.fn.version === version)) {
          this.current.delete(r.key);
          void this.kill(r);
        }
    });
  }

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

  /** A function version's name and version, or undefined when the account has no such version. */
  private versionOf(nameOrArn: string, qualifier?: string): { name: string; v: FunctionVersion } | undefined {
    return this.opts.functions.find(nameOrArn, qualifier);
  }

  /** What a function version runs: its settings, its code unpacked, its memory and role. */
  private async specFor(name: string, v: FunctionVersion): Promise<RuntimeSpec> {
    const variables = v.config.Environment.Variables;
    let settings: Omit<RuntimeConfig, "artifact_dir">;
    try {
      settings = JSON.parse(variables.AGENT_RUNTIME_CONFIG ?? "");
    } catch {
      throw new ServiceUnavailable(`${name} is no agent runtime: its AGENT_RUNTIME_CONFIG does not parse`);
    }
    const refusal = unsandboxedRefusal(settings.tenant_id);
    if (refusal) throw new ServiceUnavailable(refusal);
    return {
      config: { ...settings, artifact_dir: await this.code(name, v) },
      fn: {
        name,
        version: v.config.Version,
        role: v.config.Role,
        memoryMb: v.config.MemorySize,
        variables,
        nodeMajor: nodeMajorOfRuntime(v.config.Runtime),
      },
    };
  }

  /**
   * A version's code unpacked from its zip in S3, once per code hash, into the artifacts folder (this user's alone;
   * each sandbox passes through it to its own code).
   */
  private async code(name: string, v: FunctionVersion): Promise<string> {
    const root = await privateDir(join(tmpdir(), "agent-platform-artifacts"), { passThrough: true });
    const dir = join(root, `fn-${name}-${v.config.CodeSha256.replace(/[^\w-]/g, "_")}`);
    if (existsSync(dir)) return dir;
    const object = await s3().send(new GetObjectCommand({ Bucket: v.code.S3Bucket, Key: v.code.S3Key }));
    const entries = unzip(Buffer.from(await object.Body!.transformToByteArray()));
    const staging = `${dir}.${process.pid}.${Date.now()}`;
    for (const e of entries) {
      const target = join(staging, e.name);
      mkdirSync(join(target, ".."), { recursive: true, mode: 0o700 });
      writeFileSync(target, e.data, { mode: 0o600 });
    }
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    try {
      renameSync(staging, dir);
    } catch (err) {
      // Another start unpacked the same code first.
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(dir)) throw err;
    }
    return dir;
  }

  /** The version's runtime, started when missing. */
  private async ensure(name: string, v: FunctionVersion): Promise<Running> {
    if (this.stopped) throw new ServiceUnavailable("The local cloud is stopping");
    const key = `${name}:${v.config.Version}`;
    let r = this.current.get(key);
    if (!r || r.child.exitCode !== null || r.child.signalCode !== null) {
      // One start per version, however many invocations arrive while it starts.
      let starting = this.starting.get(key);
      if (!starting) {
        starting = this.specFor(name, v)
          .then((spec) => this.start(key, spec))
          .then((started) => {
            this.current.set(key, started);
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

  /** A version serves its function's traffic: the older versions' runtimes finish their runs and exit. */
  private serving(r: Running): void {
    const mine = Number(r.spec.fn.version);
    for (const other of [...this.current.values()])
      if (other.spec.fn.name === r.spec.fn.name && Number(other.spec.fn.version) < mine) {
        this.current.delete(other.key);
        this.retire(other);
      }
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
    const credentials = await this.servePlatform(r);
    const settings = startSettings(spec, socketDir, credentials);
    const { cmd, limits, sandbox, scratch } = this.command(spec, bundle.file, socketDir);
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
    child.on("exit", (code, signal) =>
      this.exited(r, { code, signal }, { workerId, limits, sandbox, scratch }),
    );
    return r;
  }

  /**
   * The runtime's platform socket: its AWS calls signed with credentials made for it alone and checked against its
   * role's policies (what the deploy step put, shared/containment/runtime-policy.ts) within its boundary, its writes
   * counted against its deployment's storage budget, its traces, webhook asks and egress. Answers its credentials.
   */
  private async servePlatform(r: Running) {
    const { spec, socketDir } = r;
    const { deployment_id } = spec.config;
    const credentials = mintRuntimeCredentials();
    const principal = {
      ...credentials,
      ...this.rolePolicies(spec),
      deployment: { tenant_id: spec.config.tenant_id, deployment_id },
    };
    r.platform = await servePlatformSocket(join(socketDir, PLATFORM_SOCKET), {
      aws: createPolicyProxy({
        principal: (id) => (id === principal.accessKeyId ? principal : undefined),
        upstream: this.opts.upstream(),
        region: config.region,
        kms: localKmsKeys(),
        storage: this.storage,
      }),
      traces: localTraceTransport(r.spec.config),
      webhook: (req, res) => this.runWebhook(r, req, res),
      egress: egressRules(),
    });
    return credentials;
  }

  /** The runtime's command: the Node.js its Runtime names, in the OS sandbox where there is one, within its limits. */
  private command(spec: RuntimeSpec, bundleFile: string, socketDir: string) {
    const { deployment_id } = spec.config;
    const env: Record<string, string> = {
      NODE_ENV: "production",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    };
    // A machine whose TLS is inspected names its CA here; a graph's HTTPS through the egress proxy needs it.
    if (config.localCloud.extraCaCerts) env.NODE_EXTRA_CA_CERTS = config.localCloud.extraCaCerts;
    const limits = sandboxLimits(spec.fn.memoryMb);
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
          bundleFile,
          spec.config.artifact_dir,
          scratch,
          socketDir,
          ...(env.NODE_EXTRA_CA_CERTS ? [env.NODE_EXTRA_CA_CERTS] : []),
        ],
        write: [scratch, socketDir],
      }),
      bundleFile,
    ];
    // Its socket folder (platform.sock in it) is its sandbox's uid's, the only folder it may write outside.
    const owner = runtimeSandboxOwner(deployment_id);
    if (sandbox) {
      giveToSandbox(owner, [socketDir]);
      shareWithSandbox(owner, spec.config.artifact_dir);
    }
    // The Node.js its Runtime names (fetched per major by ensure-deps.mjs), else the Lambda runtime's.
    const node = sandboxNode(spec.fn.nodeMajor);
    if (sandboxNodeMajor(spec.fn.nodeMajor) !== spec.fn.nodeMajor)
      logger.warn(
        `a nodejs${spec.fn.nodeMajor}.x runtime runs on Node.js ${sandboxNodeMajor(spec.fn.nodeMajor)} here`,
        {
          deployment_id,
        },
      );
    const cmd = sandbox
      ? sandboxedCommand([realpathSync(node), ...nodeArgs], {
          owner,
          readOnly: [bundleFile, spec.config.artifact_dir],
          readWrite: [socketDir],
          cwd: spec.config.artifact_dir,
          env,
          limits,
        })
      : { command: node, args: nodeArgs, env: { ...env, TMPDIR: scratch, HOME: scratch } };
    return { cmd, limits, sandbox, scratch };
  }

  /** A runtime ended: its folders removed, and unless it was stopped, what killed it noted and its runs retried. */
  private exited(
    r: Running,
    { code, signal }: { code: number | null; signal: NodeJS.Signals | null },
    {
      workerId,
      limits,
      sandbox,
      scratch,
    }: { workerId: string; limits: ReturnType<typeof sandboxLimits>; sandbox: boolean; scratch: string },
  ) {
    const { key, spec, socketDir } = r;
    const { deployment_id } = spec.config;
    r.agent.destroy();
    r.platform.close();
    rmSync(socketDir, { recursive: true, force: true });
    if (!sandbox) rmSync(scratch, { recursive: true, force: true });
    if (this.current.get(key) === r) this.current.delete(key);
    if (r.stopping || this.stopped) return;
    const limit = limitThatKilled({ code, signal, stderrTail: r.stderrTail }, limits);
    logger.warn("agent runtime exited", { deployment_id, code, signal, ...(limit ? { limit } : {}) });
    if (limit) void this.noteLimit(spec, limit);
    // Its runs are retried now (from their last checkpoint), which starts a runtime again.
    void sweepRuns(deploymentsHost(), Date.now(), {
      only: { tenant: spec.config.tenant_id, deployment: deployment_id },
      deadWorker: workerId,
      ...(limit ? { cause: limit } : {}),
    }).catch((err) => logger.error("retrying a crashed runtime's runs failed", { error: err }));
  }

  /**
   * Who the runtime is to the policy proxy: its function's role (as Lambda's session names it), the role's inline
   * policies as one document, and its permissions boundary. A role that is gone refuses every call.
   */
  private rolePolicies(spec: RuntimeSpec): {
    arn: string;
    policy: PolicyDocument;
    boundary?: PolicyDocument;
  } {
    const role = this.opts.iam.roleOfArn(spec.fn.role);
    const statements = Object.values(role?.policies ?? {}).flatMap((text) => {
      const doc = JSON.parse(text) as {
        Statement: PolicyDocument["Statement"] | PolicyDocument["Statement"][number];
      };
      return Array.isArray(doc.Statement) ? doc.Statement : [doc.Statement];
    });
    const boundary = role?.PermissionsBoundary
      ? this.opts.iam.managedPolicy(role.PermissionsBoundary)
      : undefined;
    return {
      arn: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${role?.RoleName ?? spec.fn.name}/${spec.fn.name}`,
      policy: { Version: "2012-10-17", Statement: statements },
      ...(boundary ? { boundary } : {}),
    };
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
        const limit = limitThatKilled(exit, sandboxLimits(r.spec.fn.memoryMb));
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
   * Functions as the local Lambda emulator serves the router's InvokeWithResponseStream (lambda-stream.ts): the
   * version's runtime, started if need be, answers the event's request (runtime-stream.ts). undefined for a version
   * the account does not have.
   */
  streaming: StreamingFunction = (name, qualifier, payload, signal) => {
    const found = this.versionOf(name, qualifier);
    return found && this.answer(found.name, found.v, payload, signal);
  };

  private async *answer(
    name: string,
    v: FunctionVersion,
    payload: unknown,
    signal: AbortSignal,
  ): AsyncGenerator<Buffer> {
    const e = payload as RuntimeEvent | undefined;
    if (e?.kind !== "http" || typeof e.tenant_id !== "string" || typeof e.event !== "object")
      throw new Error("A local runtime streams the answers of http events only");
    let r: Running;
    try {
      r = await this.ensure(name, v);
    } catch (err) {
      // What keeps a runtime from running here (no sandbox, a start that failed) is its answer, as the gateway gave it.
      if (!(err instanceof HttpError)) throw err;
      const result = json(err.status, err.body(), err.headers());
      yield Buffer.from(preludeOf(result));
      yield Buffer.from(result.body ?? "");
      return;
    }
    this.serving(r);
    yield* runtimeAnswer(
      { socketPath: join(r.socketDir, RUNTIME_SOCKET), agent: r.agent, token: r.token },
      e,
      signal,
    );
  }

  /**
   * Functions invoked with a buffered answer or asynchronously (`name` qualified as `<name>:<version>`): the deploy
   * step's health check (every graph loads: the answer names each graph's nodes, in the runtime protocol) and the
   * drains the router and the run sweeper start. undefined for a version the account does not have.
   */
  invoked = (nameOrArn: string): ((event: unknown) => Promise<Buffer | undefined>) | undefined => {
    const found = this.versionOf(nameOrArn);
    if (!found) return undefined;
    const { name, v } = found;
    return async (event) => {
      const e = event as Partial<RuntimeEvent> | undefined;
      const deploymentId = JSON.parse(
        v.config.Environment.Variables.AGENT_RUNTIME_CONFIG ?? "{}",
      ).deployment_id;
      if (e?.kind === "health") {
        const r = await this.ensure(name, v);
        const res = await this.call(r, "GET", "/__runtime/health");
        if (res.status !== 200) throw new Error(`the runtime's health check answered ${res.status}`);
        const { graphs } = JSON.parse(res.text) as { graphs: unknown[] };
        return Buffer.concat([
          Buffer.from(preludeOf(json(200, graphs))),
          Buffer.from(JSON.stringify(graphs)),
        ]);
      }
      const drain = e as Partial<Extract<RuntimeEvent, { kind: "drain" }>>;
      if (
        drain?.kind !== "drain" ||
        drain.deployment_id !== deploymentId ||
        typeof drain.tenant_id !== "string" ||
        typeof drain.thread_id !== "string"
      )
        throw new Error(`${name} takes health checks and drain events of its own deployment only`);
      const r = await this.ensure(name, v);
      this.serving(r);
      const res = await this.call(r, "POST", "/__runtime/kick", { thread_id: drain.thread_id });
      if (res.status !== 202) throw new Error(`the runtime refused a kick: ${res.status} ${res.text}`);
      return undefined;
    };
  };

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
    this.storage.flush();
  }
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
