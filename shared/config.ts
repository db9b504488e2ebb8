import path from "node:path";

// Configuration, read from the environment in one place. Every limit is here so tests can shrink it.
/** Settings handed to this process privately (an agent runtime's, on its stdin), never put in process.env. */
const sealed = new Map<string, string>();
const env = (name: string): string | undefined => {
  const v = sealed.get(name) ?? process.env[name];
  return v === undefined || v === "" ? undefined : v;
};
const int = (name: string, fallback: number): number => {
  const v = env(name);
  const n = v === undefined ? Number.NaN : Number(v);
  return Number.isFinite(n) ? n : fallback;
};
/** A count (a whole number ≥ `min`): a value that is not one stops the start, naming the variable. */
const count = (name: string, fallback: number, min = 0): number => {
  const v = env(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number of at least ${min}`);
  return n;
};

/** A whole number of at least 1; anything else set stops the start, naming the variable. */
const wholeNumber = (name: string, fallback: number): number => {
  const v = env(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`${name} must be a whole number of at least 1 (is ${v})`);
  return n;
};

/** The control-plane routes also answer under this prefix (the self-hosted API host's paths). */
export const SELF_HOSTED_PREFIX = "/api-host";

/**
 * The environment names a deployment's secrets and langgraph.json env may not use. `platform`: the names the
 * platform reads or sets for itself (they would change how it, or the deployment's runtime, behaves, or reach a
 * credential). `loader`: variables that make a program load or run other code or trust other certificates —
 * Node, libuv and V8, OpenSSL, the dynamic loader and glibc (its "unsecure" list, dropped for setuid programs),
 * shells, other interpreters, git, npm and esbuild (the build runs them), proxies (the platform routes egress).
 * Matched case-insensitively; a prefix is a start of the name; NODE_ENV stays the graph's own.
 */
const RESERVED_ENV = {
  platform: {
    prefixes: [
      "PLATFORM_",
      "TABLE_",
      "AGENT_",
      "EXPORT_",
      "KMS_",
      "AWS_",
      "LAMBDA_",
      "STATE_MACHINE_",
      "TASK_",
      "SCHEDULER_",
      "LOCAL_",
      "BUILD_",
      "AUTH_",
      "DYNAMODB_",
      "S3_",
    ],
    names: [
      "PATH",
      "HOME",
      "TMPDIR",
      "PORT",
      "HOST",
      "DATA_DIR",
      "EGRESS_ALLOW",
      "MAX_BODY_BYTES",
      "LOG_LEVEL",
      "PUBLIC_BASE_URL",
      "ARTIFACT_BUCKET",
      "RUN_SHARDS",
      "RUN_FIELD_INLINE_BYTES",
      "TENANT_ID",
      "DEPLOYMENT_ID",
      "REVISION_ID",
      "_HANDLER",
    ],
  },
  loader: {
    prefixes: [
      "NODE_",
      "UV_",
      "V8_",
      "OPENSSL_",
      "LD_",
      "DYLD_",
      "MALLOC_",
      "BASH_",
      "PYTHON",
      "PERL5",
      "GIT_",
      "XDG_",
      "NPM_CONFIG_",
      "ESBUILD_",
      "GLOBAL_AGENT_",
    ],
    names: [
      "GCONV_PATH",
      "GETCONF_DIR",
      "GLIBC_TUNABLES",
      "HOSTALIASES",
      "LOCALDOMAIN",
      "LOCPATH",
      "NIS_PATH",
      "NLSPATH",
      "RESOLV_HOST_CONF",
      "RES_OPTIONS",
      "TZDIR",
      "SSL_CERT_FILE",
      "SSL_CERT_DIR",
      "SSLKEYLOGFILE",
      "ENV",
      "SHELL",
      "SHELLOPTS",
      "BASHOPTS",
      "PS4",
      "IFS",
      "CDPATH",
      "GLOBIGNORE",
      "PROMPT_COMMAND",
      "PAGER",
      "EDITOR",
      "VISUAL",
      "LESSOPEN",
      "LESSCLOSE",
      "PERLLIB",
      "RUBYOPT",
      "RUBYLIB",
      "JAVA_TOOL_OPTIONS",
      "_JAVA_OPTIONS",
      "JDK_JAVA_OPTIONS",
      "CLASSPATH",
      "HTTP_PROXY",
      "HTTPS_PROXY",
      "FTP_PROXY",
      "NO_PROXY",
      "ALL_PROXY",
    ],
  },
  allowed: ["NODE_ENV"],
} as const;

/** An environment variable name a deployment may write: letters, digits and `_`, not starting with a digit. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Longest such name. */
export const MAX_ENV_NAME_LENGTH = 128;

/** Why an environment name is the platform's own or a loader's, or undefined when a deployment may set it. */
export function reservedEnvName(name: string): string | undefined {
  const upper = name.toUpperCase();
  if ((RESERVED_ENV.allowed as readonly string[]).includes(upper)) return undefined;
  const { platform, loader } = RESERVED_ENV;
  if ((platform.names as readonly string[]).includes(upper))
    return `${name} is reserved: the platform sets it`;
  const prefix = platform.prefixes.find((p) => upper.startsWith(p));
  if (prefix) return `${name} is reserved: names starting with ${prefix} are the platform's settings`;
  if ((loader.names as readonly string[]).includes(upper))
    return `${name} is reserved: it changes what code or certificates a program loads`;
  const loaderPrefix = loader.prefixes.find((p) => upper.startsWith(p));
  return loaderPrefix
    ? `${name} is reserved: names starting with ${loaderPrefix} change what code or certificates a program loads`
    : undefined;
}

/** Why `name` may not be a deployment's environment variable (secret or langgraph.json env), or undefined. */
export function envNameProblem(name: string): string | undefined {
  if (name.length > MAX_ENV_NAME_LENGTH)
    return `${JSON.stringify(name.slice(0, 40))}… is longer than ${MAX_ENV_NAME_LENGTH} characters`;
  if (!ENV_NAME.test(name))
    return `${JSON.stringify(name)} is not a variable name (letters, digits and _, not starting with a digit)`;
  return reservedEnvName(name);
}

/**
 * An agent runtime's settings (table names, endpoints, its credentials): read by `config` from here, so graph
 * code, which sees process.env, never finds them there.
 */
export function sealSettings(settings: Record<string, string>): void {
  for (const [name, value] of Object.entries(settings)) {
    sealed.set(name, value);
    delete process.env[name];
  }
}

/** The retentions CloudWatch Logs accepts: https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutRetentionPolicy.html */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

export const config = {
  /** Credentials given as sealed settings (an agent runtime's own); else the SDK's default chain decides. */
  get sealedCredentials(): { accessKeyId: string; secretAccessKey: string } | undefined {
    const accessKeyId = sealed.get("AWS_ACCESS_KEY_ID");
    const secretAccessKey = sealed.get("AWS_SECRET_ACCESS_KEY");
    return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
  },
  /** A sandboxed runtime's one way out: the platform's Unix socket its AWS calls go over. */
  get platformSocket() {
    return env("PLATFORM_SOCKET");
  },
  /** The region local ARNs are built in (the local cloud sets AWS_REGION); not what AWS clients are given. */
  get region() {
    return env("AWS_REGION") ?? "us-east-1";
  },
  /**
   * The region AWS clients are given: AWS_REGION when set (sealed or not), else undefined, so the SDK resolves it
   * itself (the profile's region in ~/.aws/config) as the CDK CLI does, instead of a pinned default.
   */
  get clientRegion(): string | undefined {
    return env("AWS_REGION");
  },
  /** True when running on the local cloud (npm start / tests): relaxes SSRF rules for loopback endpoints. */
  get localMode() {
    return env("PLATFORM_LOCAL") === "1";
  },
  /**
   * `host:port` entries reachable although they resolve to internal addresses (EGRESS_ALLOW, comma-separated; e.g.
   * a package registry or a model server behind a private address): by sandboxed code (builds, runtimes) and by
   * what the platform sends or fetches on a caller's or a deployment's behalf (shared/outbound/egress.ts).
   */
  get egressAllow(): string[] {
    return (env("EGRESS_ALLOW") ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
  },
  get tablePrefix() {
    return env("TABLE_PREFIX") ?? "platform-";
  },
  get kmsKeyId() {
    return env("KMS_KEY_ID") ?? "alias/agent-platform";
  },
  /** The key secrets are sealed under: a key of its own, apart from the data key of tables and buckets. */
  get secretsKeyId() {
    return env("SECRETS_KEY_ID") ?? "alias/agent-platform-secrets";
  },
  get defaultBucket() {
    return env("PLATFORM_BUCKET") ?? "agent-platform";
  },
  /**
   * Where agent state's large parts (checkpoint blobs) live: the platform bucket, the one bucket every platform
   * function and every deployment's runtime is told of (PLATFORM_BUCKET) and the runtime role's scope names.
   */
  get checkpointBucket() {
    return config.defaultBucket;
  },
  /** Where revision artifacts, build exchange objects and deploy logs live (the platform bucket unless set apart). */
  get artifactBucket() {
    return env("ARTIFACT_BUCKET") ?? config.defaultBucket;
  },
  /** A table's name when set for it alone (TABLE_MAIN, …; the deployment runtimes get theirs this way). */
  tableName(id: string): string | undefined {
    return env(`TABLE_${id.toUpperCase()}`);
  },
  /** Benchmarks: count DynamoDB and S3 requests ("1"), and each write's shape ("shapes"). */
  get countRequests(): "1" | "shapes" | undefined {
    const v = env("PLATFORM_COUNT_REQUESTS");
    return v === "1" || v === "shapes" ? v : undefined;
  },
  /**
   * The local cloud's internal endpoint and the token of its current start, which its Lambda environments (worker
   * threads, infra/local/function-host.ts) use to reach what lives in its process; unset in AWS.
   */
  get localLoopback(): { url: string; token: string } | undefined {
    const url = env("PLATFORM_LOOPBACK_URL");
    const token = env("PLATFORM_LOOPBACK_TOKEN");
    return url && token ? { url, token } : undefined;
  },
  /** Endpoint overrides for the local cloud; unset in AWS. */
  endpoint(service: "dynamodb" | "s3" | "kms" | "sfn" | "lambda" | "scheduler"): string | undefined {
    return env(`AWS_ENDPOINT_URL_${service.toUpperCase()}`);
  },
  /**
   * A domain under which each deployment also has an origin of its own, `<deployment_id>.<domain>` (besides
   * `<deployment_id>.localhost` on the local cloud); routed by Host.
   */
  get agentOriginDomain() {
    return env("AGENT_ORIGIN_DOMAIN")
      ?.toLowerCase()
      .replace(/^\.+|\.+$/g, "");
  },
  /** Where browsers reach the API (OAuth redirect_uri); unset: the request's own scheme and host. */
  get publicBaseUrl() {
    return env("PUBLIC_BASE_URL")?.replace(/\/+$/, "");
  },
  /** Longest an OAuth wait request holds the connection (under API Gateway's 30 s integration limit). */
  get authWaitSeconds() {
    return int("AUTH_WAIT_SECONDS", 25);
  },
  /** A request body once decoded (gzip, zstd): what a handler holds in memory. */
  get maxBodyBytes() {
    return int("MAX_BODY_BYTES", 20 * 1024 * 1024);
  },
  /**
   * A request body as sent, the most the AWS path takes: Lambda's synchronous payload is 6 MiB, and API Gateway
   * hands a binary body (multipart, gzip) to Lambda base64-encoded (4/3) inside an event with headers (256 KiB
   * kept for them). The local gateway refuses more with the same 413, so the local cloud behaves as AWS does.
   */
  get maxRequestBytes() {
    return int("MAX_REQUEST_BYTES", Math.floor(((6 * 1024 * 1024 - 256 * 1024) * 3) / 4));
  },
  /**
   * The batch size the langsmith SDKs are told to keep to (GET /info size_limit_bytes). Half the request limit:
   * the SDK closes a batch only once it has passed the limit (by up to one run) and adds multipart framing.
   */
  get ingestBatchBytes() {
    return int("INGEST_BATCH_BYTES", Math.floor(config.maxRequestBytes / 2));
  },
  get authCacheMs() {
    return int("AUTH_CACHE_MS", 30_000);
  },
  /**
   * Requests per workspace after authentication (shared/auth/rate-limit.ts): on average `perSecond`, at most
   * `burst` in one window of burst/perSecond seconds; more answer 429 with Retry-After.
   * 0 turns the limiter off; a workspace record may set its own (`rate_limit`, `rate_burst`).
   */
  workspaceRate: {
    get perSecond() {
      return int("WORKSPACE_RATE_LIMIT", 200);
    },
    /** Unset: BURST_SECONDS of shared/auth/rate-limit.ts worth of requests. */
    get burst(): number | undefined {
      const n = int("WORKSPACE_RATE_BURST", Number.NaN);
      return Number.isNaN(n) ? undefined : n;
    },
  },
  /**
   * Requests without a platform key to a custom-auth deployment (an app's end users, or anyone): counted per
   * deployment and per client address, never in the owner's workspace bucket (shared/auth/end-user-rate.ts).
   * Requests per second on average, a window holding BURST_SECONDS' worth; 0 turns that bucket off.
   */
  endUserRate: {
    get perDeployment() {
      return count("AGENT_END_USER_RATE_LIMIT", 100);
    },
    get perClient() {
      return count("AGENT_END_USER_CLIENT_RATE_LIMIT", 20);
    },
  },
  /** Deployments one workspace may have (not deleted); a workspace record may set its own (`max_deployments`). */
  get workspaceMaxDeployments() {
    return count("WORKSPACE_MAX_DEPLOYMENTS", 20);
  },
  /** How often an agent run's trace is ingested while the run goes on (and once more at its end). */
  get agentTraceFlushMs() {
    return int("AGENT_TRACE_FLUSH_MS", 1000);
  },
  get logLevel() {
    return (env("LOG_LEVEL") ?? "info") as "debug" | "info" | "warn" | "error";
  },
  /** Wiring the CDK app (and the local cloud) sets: where tasks, state machines and schedules are. */
  wiring: {
    /** `arn:aws:lambda:<region>:<account>:function:`, for the task functions' ARNs. */
    get taskArnPrefix() {
      return env("TASK_ARN_PREFIX");
    },
    stateMachineArn(name: string): string | undefined {
      return env(`STATE_MACHINE_${name.toUpperCase().replace(/\W/g, "_")}_ARN`);
    },
    get schedulerGroup() {
      return env("SCHEDULER_GROUP") ?? "agent-platform";
    },
    get schedulerRoleArn() {
      return env("SCHEDULER_ROLE_ARN") ?? "arn:aws:iam::000000000000:role/local-scheduler";
    },
    /** Streaming routes' functions answer through Lambda response streaming ("1", set by the CDK app). */
    get responseStreaming() {
      return env("LAMBDA_RESPONSE_STREAMING") === "1";
    },
  },
  /** What the Lambda runtime says of the function this code runs in (unset outside Lambda). */
  lambda: {
    get functionName() {
      return env("AWS_LAMBDA_FUNCTION_NAME");
    },
    get taskRoot() {
      return env("LAMBDA_TASK_ROOT");
    },
  },
  /** The agent server's settings, and what a deployment's runtime is told at deploy. */
  agent: {
    /**
     * LANGGRAPH_CONFIG, a deployment's own variable (langgraph.json env or a secret) as on the reference server:
     * JSON of graph id → the default assistant's config, its `context` key the assistant's context. Read in
     * the deployment's runtime; undefined when unset, a string when it is not such JSON (the reason).
     */
    get langgraphConfig(): Record<string, Record<string, unknown>> | string | undefined {
      const raw = env("LANGGRAPH_CONFIG");
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
    },
    /** Runs' waits (runs/wait, join): a newline this often until the values, so no proxy times the answer out. */
    get waitKeepAliveMs() {
      return int("AGENT_WAIT_KEEPALIVE_MS", 1000);
    },
    /** A running agent run's lease: renewed while it runs, retried by the sweeper when it runs out. */
    get runLeaseMs() {
      return int("AGENT_RUN_LEASE_MS", 30_000);
    },
    /** "lambda": runs execute in invocations of the runtime's function (AWS), else in the runtime process. */
    get runWorker() {
      return env("AGENT_RUN_WORKER");
    },
    /** AWS: the account facts per-deployment runtime functions are created with (JSON; set by the CDK app). */
    get runtimeScope() {
      return env("PLATFORM_RUNTIME_SCOPE");
    },
    get runtimeLayerArn() {
      return env("AGENT_RUNTIME_LAYER_ARN");
    },
    /** The runtime layer's size unzipped (measured at synth): what a revision's code must leave room for. */
    get runtimeLayerBytes() {
      const v = env("AGENT_RUNTIME_LAYER_BYTES");
      return v ? int("AGENT_RUNTIME_LAYER_BYTES", 0) : undefined;
    },
    /** The platform function a runtime sends its traces to. */
    get traceFunction() {
      return env("AGENT_TRACE_FUNCTION");
    },
    /** AWS router: the functions of the agent routes no runtime serves, by handler (JSON), for own origins. */
    get originFunctions(): Record<string, string> {
      return JSON.parse(env("AGENT_ORIGIN_FUNCTIONS") ?? "{}") as Record<string, string>;
    },
    /** In a deployment's runtime function: its settings (JSON) and the token it proves itself with. */
    get runtimeConfig() {
      return env("AGENT_RUNTIME_CONFIG");
    },
    get runtimeToken() {
      return env("AGENT_RUNTIME_TOKEN");
    },
    /** In a deployment's runtime function: where its sealed environment is (JSON {bucket, key}). */
    get runtimeSecrets() {
      return env("AGENT_RUNTIME_SECRETS");
    },
    /**
     * The most JSON bytes one trace call of a runtime carries: the platform socket refuses a larger body (413)
     * locally, AgentTraceIngest in AWS; a runtime cuts its calls at half this (its batches overshoot by a run).
     */
    get traceBodyBytes() {
      return count("AGENT_TRACE_BODY_BYTES", config.maxRequestBytes, 65_536);
    },
    /**
     * A runtime's platform socket: the bytes of request bodies it holds at once (each request reserves what it
     * declares, or its kind's cap), and the requests that may wait for room; beyond them it answers 503.
     */
    get socketBufferBytes() {
      return count("AGENT_SOCKET_BUFFER_BYTES", 32 * 1024 * 1024, 16 * 1024 * 1024);
    },
    get socketQueue() {
      return count("AGENT_SOCKET_QUEUE", 64);
    },
    /** Active runs (pending or running) one deployment may have in the sweeper's shared index; more answer 429. */
    get maxActiveRuns() {
      return count("AGENT_MAX_ACTIVE_RUNS", 1000, 1);
    },
    /**
     * AWS: concurrency reserved for (and capping) each deployment's runtime function (the CDK app's
     * runtimeReservedConcurrency); unset: none, the runtimes share the account's unreserved pool.
     */
    get runtimeReservedConcurrency(): number | undefined {
      return env("AGENT_RUNTIME_RESERVED_CONCURRENCY") === undefined
        ? undefined
        : count("AGENT_RUNTIME_RESERVED_CONCURRENCY", 0, 1);
    },
    /** AWS: days a runtime function's logs are kept (one of the values CloudWatch Logs accepts). */
    get runtimeLogRetentionDays() {
      const days = int("AGENT_RUNTIME_LOG_RETENTION_DAYS", 30);
      if (!LOG_RETENTION_DAYS.includes(days))
        throw new Error(`AGENT_RUNTIME_LOG_RETENTION_DAYS must be one of ${LOG_RETENTION_DAYS.join(", ")}`);
      return days;
    },
  },
  /** The local cloud's OS sandbox for deployments' code (shared/deploy/sandbox.ts). */
  sandbox: {
    /**
     * AGENT_UNSANDBOXED=1: on a host without the sandbox, run every workspace's deployments anyway (else only the
     * bootstrap workspace's). A warning says so at every start.
     */
    get allowUnsandboxed() {
      return env("AGENT_UNSANDBOXED") === "1";
    },
    /** The workspace `npm start` made (set by the local cloud): its deployments run even without the sandbox. */
    get bootstrapTenant() {
      return env("PLATFORM_BOOTSTRAP_TENANT");
    },
    /** A runtime's memory: its V8 heap; its writable memory may reach twice this. */
    get memoryMb() {
      return int("AGENT_RUNTIME_MEMORY_MB", 1024);
    },
    /** CPU seconds over a runtime's life; at the limit it is stopped (and started again at the next request). */
    get cpuSeconds() {
      return int("AGENT_RUNTIME_CPU_SECONDS", 4 * 3600);
    },
    get openFiles() {
      return int("AGENT_RUNTIME_OPEN_FILES", 1024);
    },
    get scratchMb() {
      return int("AGENT_RUNTIME_SCRATCH_MB", 256);
    },
    /** A runtime's threads and processes together (RLIMIT_NPROC), where its sandbox has a host uid of its own. */
    get tasks() {
      return wholeNumber("AGENT_RUNTIME_TASKS", 256);
    },
    /** Lines a second a runtime's output may put in the platform's log; the rest are counted. */
    get outputLinesPerSecond() {
      return wholeNumber("AGENT_OUTPUT_LINES_PER_SECOND", 200);
    },
    /** Characters of a line of a runtime's or build's output kept; a longer line is cut. */
    get outputLineChars() {
      return wholeNumber("AGENT_OUTPUT_LINE_CHARS", 4096);
    },
    /**
     * A build's exceptions: EGRESS_ALLOW and the npm registry the platform itself installs from (npm sets
     * npm_config_registry for its scripts), reached even where it answers from an address the SSRF rules call
     * internal (a mirror). Runtimes do not get the registry: their code has no install to run.
     */
    get buildEgressAllow(): string[] {
      const listed = [...config.egressAllow];
      try {
        const registry = new URL(env("npm_config_registry") ?? "https://registry.npmjs.org/");
        listed.push(
          `${registry.hostname.toLowerCase()}:${registry.port || (registry.protocol === "http:" ? 80 : 443)}`,
        );
      } catch {
        // not a URL: nothing added
      }
      return listed;
    },
  },
  /** Trace runs' storage. */
  runs: {
    /** Shards of a project-day's runs (write spread; an export reads them all). */
    get shards() {
      return int("RUN_SHARDS", 4);
    },
    /** A run field larger than this goes to S3, referenced from the run's item. */
    get fieldInlineBytes() {
      return int("RUN_FIELD_INLINE_BYTES", 48 * 1024);
    },
    /**
     * Stored runs one runs query may read (and pages it may fetch, a tenth of it): a filter that matches little
     * answers what it found so far with a cursor instead of reading a project's whole history in one request.
     */
    get queryScanBudget() {
      return int("RUNS_QUERY_SCAN_BUDGET", 5000);
    },
    /**
     * The retention tier of a project that names none (`longlived` or `shortlived`, the hosted platform's two
     * tiers). A trace given feedback is upgraded to `longlived`.
     */
    get defaultTraceTier(): "longlived" | "shortlived" {
      return env("TRACE_TIER_DEFAULT") === "shortlived" ? "shortlived" : "longlived";
    },
    /** Matching runs one POST /runs/stats reads at the most (more is a 422 asking for a narrower filter). */
    get statsMaxRuns() {
      return int("RUNS_STATS_MAX_RUNS", 100_000);
    },
    /** How long the presigned URL of a run's attachment (in `s3_urls`) stays valid, in seconds. */
    get attachmentUrlSeconds() {
      return int("RUN_ATTACHMENT_URL_SECONDS", 3600);
    },
    /** How long a run of each tier is kept, in days from its ingestion (then DynamoDB TTL deletes it). */
    tierDays(tier: "longlived" | "shortlived"): number {
      return tier === "shortlived"
        ? int("TRACE_TTL_SHORTLIVED_DAYS", 14)
        : int("TRACE_TTL_LONGLIVED_DAYS", 400);
    },
  },
  /** The local cloud's data folder: DynamoDB, S3 objects, the local key, the bootstrap credentials. */
  get dataDir() {
    return path.resolve(env("DATA_DIR") ?? ".data");
  },
  /** Where the build step keeps dependency trees between builds (unset: no cache). */
  get buildCacheDir() {
    return env("BUILD_CACHE_DIR");
  },
  /** Bulk export limits (spec B, "Limits"); tests shrink them. */
  export: {
    /**
     * The platform's own service endpoints, which no export destination may name under any alias: every
     * AWS_ENDPOINT_URL_* and PLATFORM_LOOPBACK_URL this process has, and PLATFORM_SERVICE_ENDPOINTS (the local
     * cloud sets it: its S3, DynamoDB, AWS emulator and policy proxies). Empty in AWS.
     */
    get platformEndpoints(): URL[] {
      const named = Object.entries(process.env)
        .filter(([k]) => k.startsWith("AWS_ENDPOINT_URL") || k === "PLATFORM_LOOPBACK_URL")
        .map(([k, v]) => [k, v ?? ""] as const);
      const listed = (env("PLATFORM_SERVICE_ENDPOINTS") ?? "")
        .split(",")
        .map((v) => ["PLATFORM_SERVICE_ENDPOINTS", v.trim()] as const);
      return [...named, ...listed]
        .filter(([, v]) => v !== "")
        .map(([k, v]) => {
          try {
            return new URL(v);
          } catch {
            throw new Error(`${k} must hold URLs: ${JSON.stringify(v)} is not one`);
          }
        });
    },
    /**
     * Access key ids that are the platform's own, which no export destination may use: this process's
     * (AWS_ACCESS_KEY_ID) and PLATFORM_ACCESS_KEY_IDS (the local cloud sets it: its S3's keys).
     */
    get platformAccessKeyIds(): string[] {
      return [env("AWS_ACCESS_KEY_ID"), ...(env("PLATFORM_ACCESS_KEY_IDS") ?? "").split(",")]
        .map((k) => k?.trim())
        .filter((k): k is string => Boolean(k));
    },
    /**
     * Whether a destination may come without credentials and be written with the platform's own (environment)
     * credentials — `allow` only in a single-tenant installation: otherwise any workspace could have the platform
     * write into, or probe, any bucket its role reaches (a confused deputy). Default: credentials are required.
     */
    get environmentCredentials() {
      return env("EXPORT_ENVIRONMENT_CREDENTIALS") === "allow";
    },
    /** Exports running at once per workspace; more wait in Created (a queue). */
    get maxRunningPerWorkspace() {
      return int("EXPORT_MAX_RUNNING_PER_WORKSPACE", 15);
    },
    /** Export runs (days) processed at once per export: the Map state's MaxConcurrency. */
    get maxConcurrentRuns() {
      return int("EXPORT_MAX_CONCURRENT_RUNS", 45);
    },
    /** Retries per export run after its first attempt. */
    get maxRetries() {
      return int("EXPORT_MAX_RETRIES", 20);
    },
    /** One attempt of one export run; exceeding it is a retryable failure. */
    get runTimeoutSeconds() {
      return int("EXPORT_RUN_TIMEOUT_SECONDS", 4 * 3600);
    },
    /** The whole export; exceeding it ends the export TimedOut, without retry. */
    get timeoutSeconds() {
      return int("EXPORT_TIMEOUT_SECONDS", 72 * 3600);
    },
    /** A Parquet file is closed when its encoded size passes this. */
    get fileBytes() {
      return int("EXPORT_FILE_BYTES", 32 * 1024 * 1024);
    },
    /** Files stream to S3 in multipart parts of this size, so memory holds one part, not a file (S3: ≥ 5 MiB). */
    get partBytes() {
      const n = int("EXPORT_PART_BYTES", 8 * 1024 * 1024);
      return config.localMode ? n : Math.max(n, 5 * 1024 * 1024);
    },
    /** Items per DynamoDB Query page while exporting (0: DynamoDB's 1 MB pages). */
    get pageSize() {
      return int("EXPORT_PAGE_SIZE", 0);
    },
    get rowGroupRows() {
      return int("EXPORT_ROW_GROUP_ROWS", 10_000);
    },
    /** One task invocation works this long, then checkpoints and returns to the state machine's loop. */
    get chunkSeconds() {
      return int("EXPORT_CHUNK_SECONDS", 600);
    },
    /** A spawned export of a scheduled export starts this long after its window ends. */
    get spawnDelaySeconds() {
      return int("EXPORT_SPAWN_DELAY_SECONDS", 600);
    },
  },
  get version() {
    return env("PLATFORM_VERSION") ?? "0.1.0";
  },
};
