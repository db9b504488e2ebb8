import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, type IncomingMessage, request, type ServerResponse } from "node:http";
import { join, resolve } from "node:path";
import type { MountedRoute } from "../../functions/routes.ts";
import { fromRecord, localDeployment } from "../../shared/agent/context.ts";
import { type AgentAccess, agentAccess } from "../../shared/agent/router-access.ts";
import type { RuntimeHost } from "../../shared/agent/runtime/host.ts";
import type { RuntimeConfig } from "../../shared/agent/runtime/serve.ts";
import { ingestDeploymentTraces } from "../../shared/agent/runtime/traces.ts";
import { sweepRuns } from "../../shared/agent/sweeper.ts";
import { config } from "../../shared/config.ts";
import { unsealSecrets } from "../../shared/control/deployments.ts";
import { secretHash } from "../../shared/crypto/secret-hash.ts";
import { materializeArtifact } from "../../shared/deploy/artifacts.ts";
import type { ArtifactManifest } from "../../shared/deploy/bundle.ts";
import { sandboxFlags } from "../../shared/deploy/sandbox.ts";
import { HttpError, NotFound, ServiceUnavailable } from "../../shared/errors.ts";
import { json } from "../../shared/http/event.ts";
import { logger } from "../../shared/log.ts";
import { recentDeploymentRecord } from "../../shared/records/control.ts";
import { jsonResult, write } from "./gateway.ts";
import { freePort, readBody } from "./http-util.ts";
import { bundleRuntime } from "./runtime-bundle.ts";
import {
  type LocalRuntimeStart,
  ROUTER_AUTH_HEADER,
  ROUTER_TENANT_HEADER,
  RUNTIME_PORT_TAKEN_EXIT,
  RUNTIME_TOKEN_HEADER,
} from "./runtime-protocol.ts";
import { RUNTIME_S3_KEY } from "./s3.ts";

// The local cloud's agent runtimes: one child process per deployment (its active revision), started at first
// use or when a revision goes live, stopped when the deployment is deleted, replaced when a newer revision
// goes live, restarted after a crash (its runs retried at once from their last checkpoint). The gateway
// authenticates each agent-server request (platform code) and forwards it here.
//
// Isolation of a child: its environment is the deployment's secrets and langgraph.json env plus the non-secret
// settings it needs (no platform credential: DynamoDB Local and s3rver take its own dummy keys); what it is told
// (its router token, port) comes on stdin; Node's permission model lets it read only the runtime bundle and its
// revision's artifact, write only its own scratch folder, and start no process or worker thread.
export interface RuntimeSpec {
  config: RuntimeConfig;
  /** The deployment's secrets and langgraph.json env. */
  env: Record<string, string>;
}

interface Running {
  key: string;
  spec: RuntimeSpec;
  child: ChildProcess;
  port: number;
  token: string;
  agent: Agent;
  ready: Promise<void>;
  startedAt: number;
  /** Spawn → first health answer (graphs imported). */
  coldStartMs?: number;
  stopping?: boolean;
}

/** How long a stopping runtime gets to send its last traces and exit before it is killed. */
const KILL_AFTER_MS = 5000;

/** The settings a local runtime gets besides the deployment's own variables (never a secret of the platform). */
const PASSED_SETTINGS = [
  "AWS_REGION",
  "AWS_ENDPOINT_URL_DYNAMODB",
  "AWS_ENDPOINT_URL_S3",
  "TABLE_PREFIX",
  "TABLE_MAIN",
  "TABLE_RUNS",
  "TABLE_CHECKPOINTS",
  "PLATFORM_LOCAL",
  "PLATFORM_BUCKET",
  "AGENT_RUN_WORKER",
  "AGENT_RUN_LEASE_MS",
  "AGENT_TRACE_FLUSH_MS",
  "LOG_LEVEL",
  "PLATFORM_COUNT_REQUESTS",
];

export class LocalRuntimes implements RuntimeHost {
  private readonly current = new Map<string, Running>();
  /** Runtimes being started, by `<deployment>@<revision>`. */
  private readonly starting = new Map<string, Promise<Running>>();
  /** Hashes of runtime tokens → the runtime they stand for (trace ingestion). */
  private readonly byToken = new Map<string, Running>();
  private stopped = false;

  constructor(private readonly opts: { dataDir: string; host: string; baseUrl: () => string }) {}

  /** The runtime bundle is built in the background at start-up, so the first deployment does not wait. */
  prepare(): void {
    // Scratch folders a killed platform's runtimes left behind.
    rmSync(join(this.runtimeDir, "scratch"), { recursive: true, force: true });
    void bundleRuntime(this.runtimeDir).catch((err: unknown) => {
      // A platform stopping while the bundle builds stops esbuild too: not a failure worth a line.
      if (!this.stopped) logger.error("runtime bundle failed", { error: err });
    });
  }

  private get runtimeDir() {
    return join(resolve(this.opts.dataDir), "runtime");
  }

  /** What the deployment's active revision needs to run: 404 for another workspace's, 503 when none is live. */
  private async specFor(tenant: string, deploymentId: string): Promise<RuntimeSpec> {
    const local = localDeployment(deploymentId);
    const d = local ? undefined : await recentDeploymentRecord(tenant, deploymentId);
    if ((local && local.tenant_id !== tenant) || (!local && !d)) throw new NotFound("Deployment not found");
    const revision = local?.revision_id ?? d?.active_revision_id;
    const prefix = d?.active_artifact_prefix;
    if (!revision || (!local && !prefix))
      throw new ServiceUnavailable("The deployment has no deployed revision yet");
    // The revision that runs already: nothing to read again.
    const running = this.current.get(deploymentId);
    if (running?.key === `${deploymentId}@${revision}`) return running.spec;
    const dir = local ? local.artifact_dir : await materializeArtifact(prefix!);
    const source = local ?? fromRecord(d!);
    const { tenant_id, deployment_id, revision_id, graphs, tracing_project_id } = source;
    return {
      config: { tenant_id, deployment_id, revision_id, graphs, tracing_project_id, artifact_dir: dir },
      env: { ...manifestEnv(dir), ...(d ? await unsealSecrets(d) : {}) },
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
        starting = this.startListening(key, spec).then((started) => {
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

  /** Starts the runtime, again on another port (three tries) when its port was taken before it listened. */
  private async startListening(key: string, spec: RuntimeSpec): Promise<Running> {
    for (let attempt = 1; ; attempt++) {
      const r = await this.start(key, spec);
      const taken = await r.ready.then(
        () => false,
        () => r.child.exitCode === RUNTIME_PORT_TAKEN_EXIT,
      );
      if (!taken || attempt >= 3) return r;
      logger.warn("agent runtime's port was taken before it listened: starting it on another", {
        deployment_id: spec.config.deployment_id,
        port: r.port,
      });
    }
  }

  private async start(key: string, spec: RuntimeSpec): Promise<Running> {
    const bundle = await bundleRuntime(this.runtimeDir);
    const { deployment_id } = spec.config;
    const scratch = join(this.runtimeDir, "scratch", `${deployment_id}-${randomUUID().slice(0, 8)}`);
    mkdirSync(scratch, { recursive: true });
    const settings: Record<string, string> = {
      NODE_ENV: "production",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      AWS_ACCESS_KEY_ID: RUNTIME_S3_KEY.id,
      AWS_SECRET_ACCESS_KEY: RUNTIME_S3_KEY.secret,
      TMPDIR: scratch,
      HOME: scratch,
    };
    for (const name of PASSED_SETTINGS) if (process.env[name]) settings[name] = process.env[name]!;
    const env = { ...spec.env, ...settings };
    const port = await freePort(this.opts.host);
    const token = randomBytes(32).toString("hex");
    const workerId = randomUUID();
    const config = { ...spec.config, worker_id: workerId };
    // Diagnostics: PLATFORM_RUNTIME_PROFILE=<folder> writes each runtime's CPU profile there when it exits. Node's
    // permission model refuses the profiler's write, so a profiled runtime runs without the sandbox.
    const profile = process.env.PLATFORM_RUNTIME_PROFILE;
    if (profile) logger.warn("profiling agent runtimes: they run without the sandbox", { folder: profile });
    const child = spawn(
      process.execPath,
      [
        ...(profile
          ? ["--cpu-prof", `--cpu-prof-dir=${profile}`]
          : sandboxFlags({ read: [bundle.dir, spec.config.artifact_dir, scratch], write: [scratch] })),
        "--openssl-legacy-provider",
        bundle.file,
      ],
      { cwd: spec.config.artifact_dir, env, stdio: ["pipe", "inherit", "inherit"] },
    );
    const start: LocalRuntimeStart = {
      runtime: config,
      token,
      host: this.opts.host,
      port,
      trace_url: `${this.opts.baseUrl()}/__platform/runtime-traces`,
    };
    child.stdin!.write(`${JSON.stringify(start)}\n`);
    child.stdin!.on("error", () => {});
    const r: Running = {
      key,
      spec,
      child,
      port,
      token,
      agent: new Agent({ keepAlive: true, maxSockets: 256 }),
      ready: Promise.resolve(),
      startedAt: performance.now(),
    };
    r.ready = this.waitReady(r);
    r.ready.catch(() => this.retire(r));
    this.byToken.set(secretHash(token), r);
    child.on("exit", (code, signal) => {
      this.byToken.delete(secretHash(token));
      r.agent.destroy();
      rmSync(scratch, { recursive: true, force: true });
      if (this.current.get(deployment_id) === r) this.current.delete(deployment_id);
      if (r.stopping || this.stopped) return;
      logger.warn("agent runtime exited", { deployment_id, code, signal });
      // Its runs are retried now (from their last checkpoint), which starts a runtime again.
      void sweepRuns(Date.now(), {
        only: { tenant: spec.config.tenant_id, deployment: deployment_id },
        deadWorker: workerId,
      }).catch((err) => logger.error("retrying a crashed runtime's runs failed", { error: err }));
    });
    return r;
  }

  private async waitReady(r: Running): Promise<void> {
    for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
      if (r.child.exitCode !== null || r.child.signalCode !== null)
        throw new ServiceUnavailable("The deployment's runtime exited while starting");
      const res = await this.call(r, "GET", "/__runtime/health").catch(() => undefined);
      if (res?.status === 200) {
        r.coldStartMs = performance.now() - r.startedAt;
        if (config.countRequests !== undefined) this.describe(r);
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
   * Diagnostics mode (PLATFORM_COUNT_REQUESTS=1, benchmarks): where a runtime listens, its token, pid and cold
   * start, in DATA_DIR/runtime/<deployment>.json (the platform's data folder, which no runtime can read).
   */
  private describe(r: Running): void {
    const { deployment_id } = r.spec.config;
    writeFileSync(
      join(this.runtimeDir, `${deployment_id}.json`),
      JSON.stringify({
        deployment_id,
        port: r.port,
        token: r.token,
        tenant_id: r.spec.config.tenant_id,
        pid: r.child.pid,
        cold_start_ms: r.coldStartMs,
      }),
      { mode: 0o600 },
    );
  }

  /** A request of the platform's own to a runtime. */
  private call(r: Running, method: string, path: string, body?: unknown) {
    return new Promise<{ status: number; body: string }>((done, fail) => {
      const req = request(
        {
          host: this.opts.host,
          port: r.port,
          method,
          path,
          agent: r.agent,
          headers: { [RUNTIME_TOKEN_HEADER]: r.token, "content-type": "application/json" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c) => {
            text += c;
          });
          res.on("end", () => done({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", fail);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /**
   * The gateway's forwarder: who may call is decided here (agentAccess: a platform API key, or the deployment's
   * custom auth), then the request goes to the runtime as it came, without the platform key.
   */
  forward = async (
    req: IncomingMessage,
    res: ServerResponse,
    _route: MountedRoute,
    params: Record<string, string>,
  ): Promise<void> => {
    let r: Running;
    let access: AgentAccess;
    try {
      access = await agentAccess(req.headers as Record<string, string | undefined>, params.deployment_id);
      r = await this.ensure(access.tenant, params.deployment_id);
    } catch (err) {
      req.resume();
      if (err instanceof HttpError) return write(res, json(err.status, err.body()));
      throw err;
    }
    const headers = {
      ...access.headers,
      [RUNTIME_TOKEN_HEADER]: r.token,
      [ROUTER_TENANT_HEADER]: access.tenant,
      [ROUTER_AUTH_HEADER]: access.auth,
    };
    await new Promise<void>((done) => {
      const upstream = request(
        { host: this.opts.host, port: r.port, method: req.method, path: req.url, headers, agent: r.agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          if (answer.headers["content-type"]?.startsWith("text/event-stream")) res.flushHeaders();
          answer.pipe(res);
          answer.on("end", done);
          answer.on("error", () => {
            res.destroy();
            done();
          });
        },
      );
      // A client that leaves ends the runtime's side too (a stream with on_disconnect=cancel cancels its run).
      res.on("close", () => {
        if (!res.writableFinished) upstream.destroy();
        done();
      });
      upstream.on("error", (err) => {
        if (!res.headersSent)
          write(res, jsonResult(502, { detail: `The deployment's runtime failed: ${err.message}` }));
        else res.destroy();
        done();
      });
      req.pipe(upstream);
    });
  };

  async kick(tenantId: string, deploymentId: string, threadId: string): Promise<void> {
    const r = await this.ensure(tenantId, deploymentId);
    const res = await this.call(r, "POST", "/__runtime/kick", { thread_id: threadId });
    if (res.status !== 202) throw new Error(`the runtime refused a kick: ${res.status} ${res.body}`);
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
  private retire(r: Running): void {
    r.stopping = true;
    r.child.kill("SIGTERM");
    setTimeout(() => r.child.kill("SIGKILL"), 40_000).unref();
  }

  private async kill(r: Running): Promise<void> {
    r.stopping = true;
    if (r.child.exitCode !== null || r.child.signalCode !== null) return;
    const gone = new Promise((done) => r.child.once("exit", done));
    // A profiled runtime gets to write its profile (SIGTERM: it exits once its runs ended). Else SIGINT: it
    // sends the traces it still holds and exits; a runtime that does not within seconds is killed.
    r.child.kill(process.env.PLATFORM_RUNTIME_PROFILE ? "SIGTERM" : "SIGINT");
    const killer = setTimeout(() => r.child.kill("SIGKILL"), KILL_AFTER_MS);
    await gone;
    clearTimeout(killer);
  }

  /**
   * Traces a runtime sends (`POST /__platform/runtime-traces`, its token in the header): ingested into its
   * deployment's tracing project, whatever project the runs name; a deployment without one sends nothing.
   */
  async ingestTraces(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = String(req.headers[RUNTIME_TOKEN_HEADER] ?? "");
    const r = this.byToken.get(secretHash(token));
    const body = await readBody(req, 50 * 1024 * 1024);
    if (!r) return write(res, jsonResult(403, { detail: "Unknown runtime" }));
    const { tenant_id, tracing_project_id } = r.spec.config;
    if (!tracing_project_id) return write(res, jsonResult(403, { detail: "The deployment is not traced" }));
    let parsed: { posts?: unknown[]; patches?: { id: string; body: unknown }[] };
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      return write(res, jsonResult(422, { detail: [{ loc: ["body"], msg: "JSON", type: "json_invalid" }] }));
    }
    const result = await ingestDeploymentTraces(
      tenant_id,
      tracing_project_id,
      parsed.posts ?? [],
      parsed.patches ?? [],
    );
    return write(res, jsonResult(200, result));
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.current.values()].map((r) => this.kill(r)));
    this.current.clear();
  }
}

function manifestEnv(dir: string): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
  return manifest.env ?? {};
}
