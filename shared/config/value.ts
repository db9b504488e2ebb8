import { availableParallelism } from "node:os";
import path from "node:path";
import { FAMILIES, SETTINGS, type Settings, settingsSchema } from "./settings.ts";

// The configuration as one value: the settings schema parsed from an environment, then shaped for its readers.

/** An environment: variable name → text (process.env's shape). */
export type Env = Readonly<Record<string, string | undefined>>;

export interface ConfigProblem {
  /** The variable. */
  name: string;
  /** What it must be and what it is (after the name: "must be …, got …"). */
  message: string;
}

/** A setting that is not what it must be: the start stops, naming every such variable. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(
      `invalid configuration: ${problems.map((p) => `${p.name} ${p.message}`).join("; ")} (docs/configuration.md)`,
    );
    this.name = "ConfigError";
  }
}

type FamilyValues = { [K in keyof typeof FAMILIES]: Record<string, string> };

/** The settings of `env` by the one schema: their values, or a ConfigError naming each bad variable. */
export function parseSettings(env: Env): { settings: Settings; families: FamilyValues } {
  const input = Object.fromEntries(Object.keys(SETTINGS).map((name) => [name, env[name]]));
  const problems: ConfigProblem[] = [];
  const parsed = settingsSchema.safeParse(input);
  if (!parsed.success)
    for (const issue of parsed.error.issues)
      problems.push({ name: String(issue.path[0] ?? "?"), message: issue.message });
  const families = {} as FamilyValues;
  for (const [key, family] of Object.entries(FAMILIES) as [
    keyof typeof FAMILIES,
    (typeof FAMILIES)[keyof typeof FAMILIES],
  ][]) {
    families[key] = {};
    for (const [name, v] of Object.entries(env)) {
      const match = family.pattern.exec(name);
      if (!match) continue;
      const item = family.item.safeParse(v);
      if (!item.success) problems.push({ name, message: item.error.issues[0].message });
      else if (item.data !== undefined) families[key][match[1]] = item.data;
    }
  }
  if (problems.length || !parsed.success) throw new ConfigError(problems);
  return { settings: parsed.data, families };
}

/** LANGGRAPH_CONFIG's value: graph id → config, or why it is not that (the runtime answers the reason). */
function langgraphConfig(
  raw: string | undefined,
): Record<string, Record<string, unknown>> | string | undefined {
  if (!raw) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    const isObject = (v: unknown): v is Record<string, unknown> =>
      v !== null && typeof v === "object" && !Array.isArray(v);
    if (isObject(parsed) && Object.values(parsed).every(isObject))
      return parsed as Record<string, Record<string, unknown>>;
    return "LANGGRAPH_CONFIG must be a JSON object of graph id → config object";
  } catch {
    return "LANGGRAPH_CONFIG is not JSON";
  }
}

/** The agent server and its runtimes. */
function agentSettings(s: Settings) {
  return {
    langgraphConfig: langgraphConfig(s.LANGGRAPH_CONFIG),
    waitKeepAliveMs: s.AGENT_WAIT_KEEPALIVE_MS,
    runLeaseMs: s.AGENT_RUN_LEASE_MS,
    runWorker: s.AGENT_RUN_WORKER,
    runtimeScope: s.PLATFORM_RUNTIME_SCOPE,
    runtimeLayerArn: s.AGENT_RUNTIME_LAYER_ARN,
    runtimeLayerBytes: s.AGENT_RUNTIME_LAYER_BYTES,
    traceFunction: s.AGENT_TRACE_FUNCTION,
    originFunctions: s.AGENT_ORIGIN_FUNCTIONS as Record<string, string>,
    runtimeConfig: s.AGENT_RUNTIME_CONFIG,
    runtimeToken: s.AGENT_RUNTIME_TOKEN,
    runtimeSecrets: s.AGENT_RUNTIME_SECRETS,
    traceBodyBytes: s.AGENT_TRACE_BODY_BYTES ?? s.MAX_REQUEST_BYTES,
    socketBufferBytes: s.AGENT_SOCKET_BUFFER_BYTES,
    socketQueue: s.AGENT_SOCKET_QUEUE,
    storageBudgetBytes: s.AGENT_STORAGE_BUDGET_BYTES,
    maxObjectBytes: s.AGENT_MAX_OBJECT_BYTES,
    maxActiveRuns: s.AGENT_MAX_ACTIVE_RUNS,
    maxSweptEntries: s.AGENT_MAX_SWEPT_ENTRIES,
    runtimeReservedConcurrency: s.AGENT_RUNTIME_RESERVED_CONCURRENCY,
    runtimeLogRetentionDays: Number(s.AGENT_RUNTIME_LOG_RETENTION_DAYS),
  };
}

/** The OS sandbox of deployments' code. */
function sandboxSettings(s: Settings) {
  const registry = new URL(s.npm_config_registry as string);
  return {
    allowUnsandboxed: s.AGENT_UNSANDBOXED,
    bootstrapTenant: s.PLATFORM_BOOTSTRAP_TENANT,
    memoryMb: s.AGENT_RUNTIME_MEMORY_MB,
    cpuSeconds: s.AGENT_RUNTIME_CPU_SECONDS,
    openFiles: s.AGENT_RUNTIME_OPEN_FILES,
    scratchMb: s.AGENT_RUNTIME_SCRATCH_MB,
    tasks: s.AGENT_RUNTIME_TASKS,
    outputLinesPerSecond: s.AGENT_OUTPUT_LINES_PER_SECOND,
    outputLineChars: s.AGENT_OUTPUT_LINE_CHARS,
    /** A build's exceptions: EGRESS_ALLOW and the npm registry the platform installs from (a mirror, maybe internal). */
    buildEgressAllow: [
      ...s.EGRESS_ALLOW,
      `${registry.hostname.toLowerCase()}:${registry.port || (registry.protocol === "http:" ? 80 : 443)}`,
    ],
  };
}

/** Trace storage. */
function runSettings(s: Settings) {
  return {
    shards: s.RUN_SHARDS,
    fieldInlineBytes: s.RUN_FIELD_INLINE_BYTES,
    queryScanBudget: s.RUNS_QUERY_SCAN_BUDGET,
    defaultTraceTier: s.TRACE_TIER_DEFAULT,
    statsMaxRuns: s.RUNS_STATS_MAX_RUNS,
    attachmentUrlSeconds: s.RUN_ATTACHMENT_URL_SECONDS,
    tierDays: (tier: "longlived" | "shortlived"): number =>
      tier === "shortlived" ? s.TRACE_TTL_SHORTLIVED_DAYS : s.TRACE_TTL_LONGLIVED_DAYS,
  };
}

/** Bulk export. */
function exportSettings(s: Settings, endpoints: Record<string, string>) {
  return {
    /** The platform's own service endpoints, which no export destination may name under any alias. */
    platformEndpoints: [
      ...(s.AWS_ENDPOINT_URL ? [s.AWS_ENDPOINT_URL] : []),
      ...Object.values(endpoints),
      ...(s.PLATFORM_LOOPBACK_URL ? [s.PLATFORM_LOOPBACK_URL] : []),
      ...s.PLATFORM_SERVICE_ENDPOINTS,
    ].map((u) => new URL(u)),
    /** Access key ids that are the platform's own (this process's and PLATFORM_ACCESS_KEY_IDS). */
    platformAccessKeyIds: [
      ...(s.AWS_ACCESS_KEY_ID ? [s.AWS_ACCESS_KEY_ID.trim()] : []),
      ...s.PLATFORM_ACCESS_KEY_IDS,
    ],
    environmentCredentials: s.EXPORT_ENVIRONMENT_CREDENTIALS === "allow",
    maxRunningPerWorkspace: s.EXPORT_MAX_RUNNING_PER_WORKSPACE,
    maxConcurrentRuns: s.EXPORT_MAX_CONCURRENT_RUNS,
    maxRetries: s.EXPORT_MAX_RETRIES,
    runTimeoutSeconds: s.EXPORT_RUN_TIMEOUT_SECONDS,
    timeoutSeconds: s.EXPORT_TIMEOUT_SECONDS,
    fileBytes: s.EXPORT_FILE_BYTES,
    partBytes: s.PLATFORM_LOCAL ? s.EXPORT_PART_BYTES : Math.max(s.EXPORT_PART_BYTES, 5 * 1024 * 1024),
    pageSize: s.EXPORT_PAGE_SIZE,
    rowGroupRows: s.EXPORT_ROW_GROUP_ROWS,
    chunkSeconds: s.EXPORT_CHUNK_SECONDS,
    spawnDelaySeconds: s.EXPORT_SPAWN_DELAY_SECONDS,
  };
}

/** The local cloud's own start (infra/local). */
function localCloudSettings(s: Settings) {
  return {
    host: s.HOST,
    port: s.PORT,
    s3Port: s.S3_PORT,
    dataDir: s.DATA_DIR,
    dynamoDbInMemory: s.DYNAMODB_IN_MEMORY,
    dynamoDbPort: s.DYNAMODB_PORT,
    dynamoDbEndpoint: s.LOCAL_DYNAMODB_ENDPOINT,
    dynamoDbToken: s.LOCAL_DYNAMODB_TOKEN,
    apiKey: s.PLATFORM_API_KEY,
    tenantId: s.PLATFORM_TENANT_ID,
    bootAt: s.PLATFORM_BOOT_AT,
    graphConfig: s.AGENT_GRAPH_CONFIG,
    functionIdleMs: s.LOCAL_FUNCTION_IDLE_MS,
    /** Undefined: no queue (0). */
    functionEnvironments:
      s.LOCAL_FUNCTION_ENVIRONMENTS === 0
        ? undefined
        : (s.LOCAL_FUNCTION_ENVIRONMENTS ?? Math.max(2, availableParallelism())),
    sfnRetryIntervalMs: s.LOCAL_SFN_RETRY_INTERVAL_MS,
    ttlSweepMs: s.LOCAL_TTL_SWEEP_MS,
    routerProvisioned: s.LOCAL_ROUTER_PROVISIONED,
    extraCaCerts: s.NODE_EXTRA_CA_CERTS,
    registry: s.npm_config_registry,
  };
}

/** The revision build step's presigned URLs and workspace (its CodeBuild environment). */
function buildSettings(s: Settings) {
  return {
    urls: {
      job: s.BUILD_JOB_URL,
      jobDelete: s.BUILD_JOB_DELETE_URL,
      log: s.BUILD_LOG_URL,
      artifact: s.BUILD_ARTIFACT_URL,
      result: s.BUILD_RESULT_URL,
    },
    tenant: s.TENANT_ID,
  };
}

/**
 * The configuration of a process whose environment is `env`, `sealed` the settings handed to it privately (an
 * agent runtime's, on its stdin: they win over `env` and are never in its process.env). Throws a ConfigError.
 */
export function buildConfig(env: Env, sealed: Env = {}) {
  const source: Env = { ...env, ...sealed };
  const { settings: s, families } = parseSettings(source);
  const maxRequestBytes = s.MAX_REQUEST_BYTES;
  const defaultBucket = s.PLATFORM_BUCKET;
  const endpoints = families.endpoints;
  return {
    /** Credentials given as sealed settings (an agent runtime's own); else the SDK's default chain decides. */
    sealedCredentials:
      sealed.AWS_ACCESS_KEY_ID && sealed.AWS_SECRET_ACCESS_KEY
        ? { accessKeyId: sealed.AWS_ACCESS_KEY_ID, secretAccessKey: sealed.AWS_SECRET_ACCESS_KEY }
        : undefined,
    platformSocket: s.PLATFORM_SOCKET,
    /** The region local ARNs are built in; not what AWS clients are given. */
    region: s.AWS_REGION ?? "us-east-1",
    /** The region AWS clients are given: unset, the SDK resolves it itself (the profile's), as the CDK CLI does. */
    clientRegion: s.AWS_REGION,
    /** The CDK app's region when no `-c region=` names one. */
    cdkDefaultRegion: s.CDK_DEFAULT_REGION,
    localMode: s.PLATFORM_LOCAL,
    egressAllow: s.EGRESS_ALLOW,
    tablePrefix: s.TABLE_PREFIX,
    kmsKeyId: s.KMS_KEY_ID,
    secretsKeyId: s.SECRETS_KEY_ID,
    defaultBucket,
    /** Where agent state's large parts (checkpoint blobs) live: the platform bucket. */
    checkpointBucket: defaultBucket,
    artifactBucket: s.ARTIFACT_BUCKET ?? defaultBucket,
    /** A table's name when set for it alone (TABLE_MAIN, …). */
    tableName: (id: string): string | undefined => families.tables[id.toUpperCase()],
    countRequests: s.PLATFORM_COUNT_REQUESTS,
    /** Endpoint overrides for the local cloud; unset in AWS. */
    endpoint: (
      service: "dynamodb" | "s3" | "kms" | "sfn" | "lambda" | "scheduler" | "iam" | "cloudwatch_logs",
    ): string | undefined => endpoints[service.toUpperCase()],
    agentOriginDomain: s.AGENT_ORIGIN_DOMAIN?.toLowerCase().replace(/^\.+|\.+$/g, ""),
    publicBaseUrl: s.PUBLIC_BASE_URL?.replace(/\/+$/, ""),
    authWaitSeconds: s.AUTH_WAIT_SECONDS,
    maxBodyBytes: s.MAX_BODY_BYTES,
    maxRequestBytes,
    ingestBatchBytes: s.INGEST_BATCH_BYTES ?? Math.floor(maxRequestBytes / 2),
    authCacheMs: s.AUTH_CACHE_MS,
    workspaceRate: { perSecond: s.WORKSPACE_RATE_LIMIT, burst: s.WORKSPACE_RATE_BURST },
    endUserRate: {
      perDeployment: s.AGENT_END_USER_RATE_LIMIT,
      perClient: s.AGENT_END_USER_CLIENT_RATE_LIMIT,
    },
    workspaceMaxDeployments: s.WORKSPACE_MAX_DEPLOYMENTS,
    agentTraceFlushMs: s.AGENT_TRACE_FLUSH_MS,
    logLevel: s.LOG_LEVEL,
    wiring: {
      taskArnPrefix: s.TASK_ARN_PREFIX,
      stateMachineArn: (name: string): string | undefined =>
        families.stateMachines[name.toUpperCase().replace(/\W/g, "_")],
      schedulerGroup: s.SCHEDULER_GROUP,
      schedulerRoleArn: s.SCHEDULER_ROLE_ARN,
      responseStreaming: s.LAMBDA_RESPONSE_STREAMING,
    },
    lambda: { functionName: s.AWS_LAMBDA_FUNCTION_NAME, taskRoot: s.LAMBDA_TASK_ROOT },
    agent: agentSettings(s),
    sandbox: sandboxSettings(s),
    runs: runSettings(s),
    dataDir: path.resolve(s.DATA_DIR),
    buildCacheDir: s.BUILD_CACHE_DIR,
    buildMaxWriteBytes: s.BUILD_MAX_WRITE_BYTES,
    export: exportSettings(s, endpoints),
    localCloud: localCloudSettings(s),
    build: buildSettings(s),
    /** CLI scripts: the API key of a deployed platform (`npm run aws:smoke`). */
    cliApiKey: s.AGENT_PLATFORM_API_KEY ?? s.LANGSMITH_API_KEY,
    /** `npm run aws:smoke`: the repository of the agent it deploys (none: those steps are skipped). */
    smokeAgentRepo: s.AWS_SMOKE_AGENT_REPO,
    version: s.PLATFORM_VERSION,
    /**
     * The text of each named setting that was set (sealed ones excepted): what a child process is passed on when it
     * is to read the same setting.
     */
    text: (name: keyof typeof SETTINGS | `TABLE_${string}`): string | undefined => {
      if (sealed[name] !== undefined) return undefined;
      const v = env[name];
      return v === undefined || v === "" ? undefined : v;
    },
  };
}

/** The platform's configuration: one validated value per process (shared/config.ts). */
export type Config = ReturnType<typeof buildConfig>;
