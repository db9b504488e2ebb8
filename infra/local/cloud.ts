import "./polyfill.ts";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CodeBuildClient } from "@aws-sdk/client-codebuild";
import { taskByName, tasks } from "../../functions/task-manifest.ts";
import { moveAgentIndexEntries } from "../../shared/agent/runs/agent-index.ts";
import { ensureTenant, KeyRevoked, newApiKey, newTenantId, storeApiKey } from "../../shared/auth/api-keys.ts";
import { dynamo, resetClients } from "../../shared/aws/clients.ts";
import { addRequestStats, requestStats } from "../../shared/aws/request-stats.ts";
import { config, loadConfig, processEnvironment, setEnvironment } from "../../shared/config.ts";
import { privateDirSync } from "../../shared/containment/private-dir.ts";
import { MACHINE as REVISION_MACHINE } from "../../shared/control/pipeline.ts";
import { grantFolder } from "../../shared/control/repo-grants.ts";
import { logger } from "../../shared/log.ts";
import { indexUnindexedThreads } from "../../shared/runs/thread-index.ts";
import { BUILD_PROJECT_NAME } from "../build/project.ts";
import { startAwsEmulator } from "./aws-emulator.ts";
import { type Backend, newBackendToken } from "./backend-token.ts";
import { bundleLocalBuildStep } from "./codebuild.ts";
import { consoleCsp } from "./console-files.ts";
import { type LocalControlPlane, localControlPlane, localPlatformScope } from "./control-plane/index.ts";
import { createTables, DynamoPortInUse, LOOPBACK, startDynamoDb } from "./dynamodb.ts";
import { LocalFunctions } from "./functions.ts";
import { Gateway, jsonResult, write } from "./gateway.ts";
import { LOCAL_GRAPH_DEPLOYMENT, localGraphDeployment } from "./graph-folder.ts";
import { freePort, StartupError, startOnFreePorts } from "./http-util.ts";
import { LocalKms } from "./kms.ts";
import { LocalLambda } from "./lambda.ts";
import { oncePerDataFolder } from "./migrations.ts";
import { operatorCredentials, operatorPrincipal } from "./operator.ts";
import { localResourceArns, type PlatformRoleProxy, startPlatformRoleProxy } from "./platform-roles.ts";
import { backfillRuntimeVersionsOnce, redeployMissingRuntimes } from "./runtime-versions.ts";
import { LocalRuntimes } from "./runtimes.ts";
import { S3_ACCESS_KEY_ID, startS3 } from "./s3.ts";
import { LocalScheduler } from "./scheduler.ts";
import { LocalStepFunctions, localStateMachineArn } from "./sfn.ts";
import { CODEBUILD_RESOURCE, startBuildSync } from "./sfn-codebuild.ts";
import { LOCAL_TTL_SWEEP, LocalTtl, ttlEmulatedTables } from "./ttl.ts";

// The local cloud: every AWS part replaced by a local one speaking its protocol, the handlers unchanged.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const STATE_MACHINE_DIR = join(ROOT, "infra", "state-machines");
/** How often the Build state's integration asks CodeBuild whether its build has ended (BatchGetBuilds). */
const BUILD_POLL_MS = 250;

export interface CloudOptions {
  host?: string;
  port?: number;
  /** The port of the local cloud's AWS endpoint (S3_PORT): its policy proxy, where S3 and every other service is. */
  s3Port?: number;
  dataDir?: string;
  /** Keep DynamoDB in memory (tests); otherwise data lives under dataDir and survives restarts. */
  inMemory?: boolean;
  /** DynamoDB Local's port (a free one by default). */
  dynamoDbPort?: number;
  /**
   * The endpoint the platform's DynamoDB clients (and its runtimes') use instead of DynamoDB Local's own. With
   * dynamoDbPort: a proxy in front of the DynamoDB Local started there (the reliability bench's fault injection);
   * alone: a DynamoDB already running (a test's shared one, each platform under a TABLE_PREFIX of its own), and
   * no DynamoDB Local is started.
   */
  dynamoDbEndpoint?: string;
  /** The token of the DynamoDB already running at dynamoDbEndpoint (what its start's proxy adds: backend-token.ts). */
  dynamoDbToken?: string;
  apiKey?: string;
  tenantId?: string;
  schedulerIntervalMs?: number;
  /** How often DynamoDB TTL is emulated (LOCAL_TTL_SWEEP_MS; 0: only when invoked as LocalTtlSweep). */
  ttlSweepMs?: number;
}

export interface LocalFacts {
  base_url: string;
  tenant_id: string;
  api_key: string;
  /**
   * The local cloud's AWS endpoint (its policy proxy: S3, DynamoDB, KMS, Step Functions, Lambda and Scheduler, told
   * apart by the signature) with the operator's keys (operator.ts), and the platform's bucket.
   */
  s3: { endpoint: string; access_key_id: string; secret_access_key: string; bucket: string };
  /** The same endpoint for DynamoDB (signed with the keys above), and the platform's process id, for benchmarks. */
  dynamodb_endpoint: string;
  /** The prefix of the platform's table names there (TABLE_PREFIX: several platforms may share one DynamoDB). */
  table_prefix: string;
  pid: number;
}

export interface Cloud {
  facts: LocalFacts;
  sfn: LocalStepFunctions;
  lambda: LocalLambda;
  scheduler: LocalScheduler;
  ttl: LocalTtl;
  gateway: Gateway;
  runtimes: LocalRuntimes;
  /**
   * The backends behind the policy proxy, with the tokens they answer: for tests that build a proxy of their own or
   * share this DynamoDB (in this process only, never in local.json).
   */
  backends: { dynamodb: Backend; s3: Backend; emulator: Backend };
  startupMs: number;
  stop(): Promise<void>;
}

async function bootstrapCredentials(dataDir: string, opts: CloudOptions) {
  const file = join(dataDir, "credentials.json");
  const saved = existsSync(file)
    ? (JSON.parse(readFileSync(file, "utf8")) as { api_key: string; tenant_id: string })
    : undefined;
  let apiKey = opts.apiKey ?? saved?.api_key ?? newApiKey();
  const tenantId = opts.tenantId ?? saved?.tenant_id ?? newTenantId();
  await ensureTenant(tenantId, "Default workspace");
  try {
    await storeApiKey(apiKey, [tenantId], "bootstrap");
  } catch (err) {
    // A revoked bootstrap key stays revoked: a new one replaces it (one the operator set must be changed).
    if (!(err instanceof KeyRevoked)) throw err;
    if (opts.apiKey)
      throw new StartupError("PLATFORM_API_KEY was revoked (npm run revoke-key): set another key");
    apiKey = newApiKey();
    await storeApiKey(apiKey, [tenantId], "bootstrap");
    logger.warn(
      "the bootstrap API key was revoked: a new one replaces it (printed below, and in local.json)",
    );
  }
  // The operator's own workspace may deploy the folder `npm start` runs in (README's tour, examples/).
  await grantFolder(tenantId, process.cwd());
  if (!opts.apiKey || !opts.tenantId)
    writeFileSync(file, JSON.stringify({ api_key: apiKey, tenant_id: tenantId }), { mode: 0o600 });
  return { apiKey, tenantId };
}

/**
 * DynamoDB Local on the given port, or on a free one: a port taken between the probe and DynamoDB Local's bind
 * is given up for another (three tries).
 */
export async function startDynamoDbOnAPort(
  fixed: number | undefined,
  dataDir: string | undefined,
  token: string,
  pick: () => Promise<number> = () => freePort(LOOPBACK),
) {
  if (fixed) return startDynamoDb({ port: fixed, dataDir, token });
  return startOnFreePorts(
    async () => startDynamoDb({ port: await pick(), dataDir, token }),
    (err) => err instanceof DynamoPortInUse,
  );
}

/** What a start has started, stopped in reverse on every exit path. */
class Stops {
  private readonly stops: (() => Promise<unknown> | unknown)[] = [];
  push(...stops: (() => Promise<unknown> | unknown)[]) {
    this.stops.push(...stops);
  }
  readonly stopAll = async () => {
    for (const s of this.stops.reverse()) await Promise.resolve(s()).catch(() => {});
  };
}

/** The parts started after the ones that call them (the role proxy, the runtimes), reached once they exist. */
interface LateParts {
  roleProxy?: PlatformRoleProxy;
  runtimes?: LocalRuntimes;
}

export async function startCloud(opts: CloudOptions = {}): Promise<Cloud> {
  const started = performance.now();
  // Only the gateway listens on `host` (HOST); the services behind it stay on loopback whatever it is.
  const host = opts.host ?? LOOPBACK;
  const dataDir = resolve(opts.dataDir ?? ".data");
  // The KMS master key, the bootstrap key, every workspace's objects: this user's alone.
  privateDirSync(dataDir, { follow: true });
  // The local cloud is an entry point: its settings parsed as this start finds them (a bad one stops it here, naming
  // the variable), and again each time it sets variables for its parts (setEnvironment), so this process reads one
  // value rather than the environment on every call.
  const settings = loadConfig();
  const bucket = settings.defaultBucket;
  const artifactBucket = settings.text("ARTIFACT_BUCKET") ?? localArtifactBucket(join(dataDir, "s3"), bucket);
  const stops = new Stops();
  try {
    // The backends answer only what the policy proxy forwards, with the token of this start (backend-token.ts).
    const token = newBackendToken();
    const backends = await startBackends(opts, { dataDir, token, buckets: [bucket, artifactBucket] }, stops);
    setEnvironment({
      PLATFORM_LOCAL: "1",
      // Pinned for the build's child process, whose working folder may differ (shared/build/local-repos.ts).
      DATA_DIR: dataDir,
      PLATFORM_BUCKET: bucket,
      ARTIFACT_BUCKET: artifactBucket,
      AWS_REGION: settings.region,
    });
    const loopback = { url: "" };
    const late: LateParts = {};
    // Lambda's functions, IAM's roles and CloudWatch Logs' groups of the local account (what the deploy step makes).
    const controlPlane = localControlPlane({
      dataDir,
      region: settings.region,
      s3: () => ({ endpoint: backends.s3.endpoint, token }),
    });
    const services = localServices(opts, dataDir, loopback, late, controlPlane);
    const door = await startServiceDoor(
      opts,
      { dataDir, token, backends, services, controlPlane, late },
      stops,
    );
    await prepareData();
    const { apiKey, tenantId } = await bootstrapCredentials(dataDir, opts);
    setEnvironment({ PLATFORM_BOOTSTRAP_TENANT: tenantId });

    // Each deployment's runtime (a child process), which the router invokes through the emulator as in AWS.
    // The local Lambda service's executor of the functions the deploy step creates (deployments' runtimes), which
    // the router invokes through the emulator as in AWS.
    const runtimes = new LocalRuntimes({
      dataDir,
      upstream: () => door.upstream,
      functions: controlPlane.functions,
      iam: controlPlane.iam,
    });
    late.runtimes = runtimes;
    runtimes.announce();
    runtimes.prepare();
    stops.push(() => runtimes.stopAll());
    const { gateway, boundPort } = await startGateway(
      opts,
      { host, loopback, services, door, tenantId },
      stops,
    );
    // Stops run in reverse: the runtimes stop first, while the gateway still takes the traces they send last.
    stops.push(() => runtimes.stopAll());
    const { scheduler, ttl, sfn, lambda } = services;
    scheduler.start();
    ttl.start();
    stops.push(
      () => scheduler.stop(),
      () => ttl.stop(),
      () => sfn.stopAll(),
    );

    const facts: LocalFacts = {
      base_url: `http://${host}:${boundPort}`,
      tenant_id: tenantId,
      api_key: apiKey,
      s3: {
        endpoint: door.roleProxy.url,
        access_key_id: door.operator.accessKeyId,
        secret_access_key: door.operator.secretAccessKey,
        bucket,
      },
      dynamodb_endpoint: door.roleProxy.url,
      table_prefix: config.tablePrefix,
      pid: process.pid,
    };
    writeFileSync(join(dataDir, "local.json"), `${JSON.stringify(facts, null, 2)}\n`, { mode: 0o600 });
    // Work an earlier process left unfinished (exports mid-run) is re-driven now, in the background.
    for (const t of tasks.filter((x) => x.onLocalStart)) void lambda.invoke(t.name, {}, true);
    // Live deployments of an earlier data folder get the runtime function their deploy made nowhere then.
    void redeployMissingRuntimes().catch((err) =>
      logger.error("redeploying deployments without their runtime function failed", { error: err }),
    );
    return {
      facts,
      sfn,
      lambda,
      scheduler,
      ttl,
      gateway,
      runtimes,
      backends: door.upstream,
      startupMs: performance.now() - started,
      stop: stops.stopAll,
    };
  } catch (err) {
    await stops.stopAll();
    throw err;
  }
}

/** DynamoDB Local (unless a shared one is named) and s3rver, side by side. */
async function startBackends(
  opts: CloudOptions,
  at: { dataDir: string; token: string; buckets: string[] },
  stops: Stops,
) {
  const sharedDynamoDb = opts.dynamoDbEndpoint && !opts.dynamoDbPort ? opts.dynamoDbEndpoint : undefined;
  if (sharedDynamoDb && !opts.dynamoDbToken)
    throw new StartupError(
      "LOCAL_DYNAMODB_ENDPOINT names a DynamoDB this start did not start: set LOCAL_DYNAMODB_TOKEN to the token it answers.",
    );
  const [ddb, s3] = await Promise.all([
    sharedDynamoDb
      ? { endpoint: sharedDynamoDb, stop: async () => {} }
      : startDynamoDbOnAPort(
          opts.dynamoDbPort,
          opts.inMemory ? undefined : join(at.dataDir, "dynamodb"),
          at.token,
        ),
    startOnFreePorts(
      async () =>
        startS3({
          host: LOOPBACK,
          port: await freePort(LOOPBACK),
          directory: join(at.dataDir, "s3"),
          buckets: at.buckets,
          token: at.token,
        }),
      (err) => (err as { code?: string })?.code === "EADDRINUSE",
    ),
  ]).catch(async (err) => {
    await stops.stopAll();
    throw err;
  });
  stops.push(
    () => ddb.stop(),
    () => s3.stop(),
  );
  return { ddb, s3, sharedDynamoDb };
}

/**
 * The services the platform's functions call (Lambda, Step Functions, Scheduler, DynamoDB TTL, KMS, CodeBuild),
 * and the functions themselves: every platform function runs from its AWS bundle in environments of its own
 * (workers), which see the settings above, the endpoints of the role proxy and how to reach this process (its
 * gateway, with this start's token).
 */
function localServices(
  opts: CloudOptions,
  dataDir: string,
  loopback: { url: string },
  late: LateParts,
  controlPlane: LocalControlPlane,
) {
  const functions = new LocalFunctions({
    environment: (f) => {
      // Its AWS calls are signed with its role's keys and checked by the proxy against that role's policy.
      const role = late.roleProxy?.environmentFor(f.id);
      if (!role) throw new Error(`${f.id} has no platform role the local cloud can give it`);
      return {
        ...processEnvironment(),
        ...role,
        PLATFORM_LOOPBACK_URL: loopback.url,
      };
    },
    // The local stand-ins of the schedules (the sweeper's and the cron tick's timers) live in their environment.
    keepWarm: (f) => tasks.some((t) => t.onLocalStart && `Task-${t.name}` === f.id),
    queueBeyond: config.localCloud.functionEnvironments,
  });

  // The Build state's CodeBuild calls, signed as the revision machine's role (through the role proxy, as in AWS).
  let codeBuildClient: CodeBuildClient | undefined;
  const codeBuild = startBuildSync(() => {
    const role = late.roleProxy?.machines.get(REVISION_MACHINE);
    if (!late.roleProxy || !role)
      throw new Error("the revision machine has no role the local cloud can give it");
    codeBuildClient ??= new CodeBuildClient({
      endpoint: late.roleProxy.url,
      region: config.region,
      credentials: { accessKeyId: role.accessKeyId, secretAccessKey: role.secretAccessKey },
    });
    return codeBuildClient;
  }, BUILD_POLL_MS);
  // Bundled in the background, so the first build does not wait for it (a failure shows at that build).
  bundleLocalBuildStep().catch(() => {});
  /** The Lambda functions (what Invoke reaches). */
  const resolveFunction = (nameOrArn: string) => {
    // Tests sweep expired items now rather than wait for the timer.
    if (nameOrArn === LOCAL_TTL_SWEEP) return () => ttl.sweep();
    const task = taskByName(nameOrArn);
    // A deployment's runtime function, invoked asynchronously: the drains the router and the sweeper start.
    return task ? functions.task(task) : late.runtimes!.invoked(nameOrArn);
  };
  // CodeBuild is a service integration of Step Functions, not a function: only a state machine's Build state starts
  // a build (its input a StartBuild request), never a Lambda Invoke, whatever its caller may invoke.
  const resolveTask = (nameOrArn: string) =>
    nameOrArn.startsWith(CODEBUILD_RESOURCE) ? codeBuild : resolveFunction(nameOrArn);
  const kms = new LocalKms(dataDir);
  const sfn = new LocalStepFunctions(STATE_MACHINE_DIR, resolveTask, {
    // The resources the CDK app substitutes into the ASL besides functions: the build project's name.
    substitutions: { RevisionBuildProjectName: BUILD_PROJECT_NAME },
    // What EventBridge's "Step Functions Execution Status Change" rule delivers in AWS.
    onEnded: (machine, detail) => {
      for (const t of tasks.filter((x) => x.onExecutionEnd === machine))
        void lambda.invoke(t.name, { source: "aws.states", detail }, true);
    },
    retryIntervalMs: config.localCloud.sfnRetryIntervalMs,
  });
  // A function created through Lambda's API runs as its configuration says (its event-invoke setting, its timeout),
  // its asynchronous invocations (drains) counted toward its reservation as its sync and streamed ones are.
  const lambda = new LocalLambda(
    resolveFunction,
    undefined,
    (nameOrArn) => controlPlane.functions.runSettings(nameOrArn) ?? { retries: 2 },
  );
  const scheduler = new LocalScheduler(async (target) => {
    const input = target.Input ? JSON.parse(target.Input) : {};
    if (target.Arn.includes(":aws-sdk:sfn:startExecution")) {
      sfn.startExecution({ stateMachineArn: input.StateMachineArn, name: input.Name, input: input.Input });
    } else {
      await lambda.invoke(target.Arn, input, true);
    }
  }, opts.schedulerIntervalMs);
  // DynamoDB TTL (DynamoDB Local never deletes expired items): what it deletes is delivered as a stream would.
  const ttl = new LocalTtl(
    tasks,
    (name, event) => lambda.invoke(name, event, false),
    opts.ttlSweepMs ?? config.localCloud.ttlSweepMs,
  );
  return { functions, kms, sfn, lambda, scheduler, ttl };
}
type LocalServices = ReturnType<typeof localServices>;

/**
 * The one door to the backends and the services: the AWS emulator behind the role proxy, which the platform
 * functions (their roles) and the operator (this process, and what its operator runs: local.json's keys) reach.
 * This process's own AWS calls go through it from here on.
 */
async function startServiceDoor(
  opts: CloudOptions,
  parts: {
    dataDir: string;
    token: string;
    backends: Awaited<ReturnType<typeof startBackends>>;
    services: LocalServices;
    controlPlane: LocalControlPlane;
    late: LateParts;
  },
  stops: Stops,
) {
  const { token, backends, services, controlPlane, late } = parts;
  const { ddb, s3, sharedDynamoDb } = backends;
  const { kms, sfn, lambda, scheduler, functions } = services;
  const emulator = await startAwsEmulator(
    // Deployments' runtime functions answer the router's InvokeWithResponseStream.
    {
      kms,
      sfn,
      lambda,
      scheduler,
      streaming: (...call) => late.runtimes!.streaming(...call),
      functions: controlPlane.functions,
      iam: controlPlane.iam,
      logs: controlPlane.logs,
      codebuild: controlPlane.codebuild,
    },
    LOOPBACK,
    token,
  );
  stops.push(() => new Promise((r) => emulator.server.close(r)));
  stops.push(() => controlPlane.codebuild.stopAll());
  const upstream = {
    dynamodb: {
      endpoint: opts.dynamoDbEndpoint ?? ddb.endpoint,
      token: sharedDynamoDb ? (opts.dynamoDbToken as string) : token,
    },
    s3: { endpoint: s3.endpoint, token },
    emulator: { endpoint: emulator.url, token },
  };
  const operator = operatorPrincipal(operatorCredentials(parts.dataDir));
  const proxyPort = opts.s3Port ?? 9090;
  const roleProxy = await startPlatformRoleProxy(upstream, {
    operator,
    port: proxyPort,
    iamRole: controlPlane.iamRole,
  }).catch((err) => {
    throw err?.code === "EADDRINUSE"
      ? new StartupError(
          `Port ${proxyPort} (the local cloud's AWS endpoint: S3 and the other services) is in use: stop what holds it or set S3_PORT to a free port.`,
        )
      : err;
  });
  late.roleProxy = roleProxy;
  stops.push(() => roleProxy.close());
  // Stopped before the proxy and the emulator they call (stops run in reverse); none has started before this.
  stops.push(() => functions.stopAll());
  // Before the environments stop, asynchronous invocations stop retrying into them (stops run in reverse).
  stops.push(() => lambda.stop());
  const machineArns = Object.fromEntries(
    sfn
      .machineNames()
      .map((n) => [`STATE_MACHINE_${n.toUpperCase().replace(/\W/g, "_")}_ARN`, localStateMachineArn(n)]),
  );
  setEnvironment({
    ...roleProxy.environmentOf(operator),
    // What no export destination may name or use (shared/export/destination-guard.ts): the proxy and the services
    // behind it, and the keys of the platform (its roles', its operator's, s3rver's own).
    PLATFORM_SERVICE_ENDPOINTS: [
      ddb.endpoint,
      opts.dynamoDbEndpoint,
      s3.endpoint,
      emulator.url,
      roleProxy.url,
    ]
      .filter(Boolean)
      .join(","),
    PLATFORM_ACCESS_KEY_IDS: [
      S3_ACCESS_KEY_ID,
      operator.accessKeyId,
      ...[...roleProxy.principals.values(), ...roleProxy.machines.values()].map((p) => p.accessKeyId),
    ].join(","),
    KMS_KEY_ID: "alias/local",
    // The deploy step's account facts, as the CDK app gives them (lambda-host.ts): deployments' runtimes are functions
    // created through the local Lambda API, their roles bound by the account's runtime boundary.
    PLATFORM_RUNTIME_SCOPE: JSON.stringify(localPlatformScope()),
    AGENT_RUNTIME_LAYER_ARN: localResourceArns().runtimeLayer(),
    TASK_ARN_PREFIX: `arn:aws:lambda:${config.region}:000000000000:function:`,
    ...machineArns,
  });
  resetClients();
  return { upstream, operator, roleProxy };
}

/** The tables, and what a data folder of an earlier version needs before anything reads it. */
async function prepareData() {
  await createTables(dynamo(), ttlEmulatedTables(tasks));
  // A DATA_DIR of an earlier version: its agent records' index entries move to AGENT1 before anything reads it.
  await moveAgentIndexEntries();
  // And its live deployments get the runtime version the router reads.
  await backfillRuntimeVersionsOnce();
  // And its runs with a thread id go on the thread index.
  await oncePerDataFolder("thread-index", async () => {
    const runs = await indexUnindexedThreads();
    if (runs) logger.info("runs put on the thread index", { runs });
  });
}

/** The gateway on `host`: the route manifest's handlers and the agent router. */
async function startGateway(
  opts: CloudOptions,
  parts: {
    host: string;
    loopback: { url: string };
    services: LocalServices;
    door: Awaited<ReturnType<typeof startServiceDoor>>;
    /** The operator's workspace (the bootstrap key's). */
    tenantId: string;
  },
  stops: Stops,
) {
  const { host, loopback, tenantId } = parts;
  const { functions } = parts.services;
  const gateway = new Gateway({
    // Attachments are presigned by the functions, whose S3 endpoint is the role proxy.
    consoleCsp: consoleCsp(parts.door.roleProxy.url),
    // Agent-server requests go to the router's bundle under its role, as API Gateway sends them in AWS.
    router: (event) => functions.router(event),
    // `/agents/local`: the deployment `npm start -- --graph` deployed in the operator's workspace.
    alias: async (id) => (id === LOCAL_GRAPH_DEPLOYMENT ? localGraphDeployment(tenantId) : undefined),
    loader: async (route) => functions.route(route),
    internal: {
      // Diagnostics mode only (benchmarks): the DynamoDB and S3 request counts of this process and its functions.
      ...(config.countRequests !== undefined
        ? {
            "/__platform/stats": async (_req: IncomingMessage, res: ServerResponse) =>
              write(
                res,
                jsonResult(200, {
                  pid: process.pid,
                  requests: addRequestStats(requestStats(), ...functions.requestStats()),
                }),
              ),
          }
        : {}),
    },
  });
  await gateway.load();
  const port = opts.port ?? 8080;
  const boundPort = await gateway.listen(port, host).catch((err) => {
    throw err?.code === "EADDRINUSE"
      ? new StartupError(`Port ${port} is in use: stop what holds it or set PORT to a free port.`)
      : err;
  });
  stops.push(() => gateway.close());
  loopback.url = `http://${host === "0.0.0.0" || host === "::" ? LOOPBACK : host}:${boundPort}`;
  // Every agent-server request passes the router: a few of its environments start now, in the background.
  void functions.get("AgentRouter").provision(config.localCloud.routerProvisioned);
  return { gateway, boundPort };
}

/**
 * Artifacts get a bucket of their own, as in AWS, so a grant on the wrong bucket fails here as it would there.
 * A data folder from before kept them in the platform bucket (with records that name it): it stays one bucket.
 */
function localArtifactBucket(s3Dir: string, bucket: string): string {
  const own = `${bucket}-artifacts`;
  if (existsSync(join(s3Dir, bucket)) && !existsSync(join(s3Dir, own))) {
    process.stderr.write(
      `This data folder keeps artifacts in the platform bucket ${bucket} (made before ${own}).\n`,
    );
    return bucket;
  }
  return own;
}
