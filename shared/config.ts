// Configuration, read from the environment in one place. Every limit is here so tests can shrink it.
const env = (name: string): string | undefined => {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
};
const int = (name: string, fallback: number): number => {
  const v = env(name);
  const n = v === undefined ? Number.NaN : Number(v);
  return Number.isFinite(n) ? n : fallback;
};

/**
 * The environment names the platform reads or sets for itself. A deployment's secrets and its langgraph.json
 * env may not use them: they would change how the platform (or the deployment's runtime) behaves, or reach
 * a credential. Prefixes end in `_`; NODE_ENV stays the graph's own.
 */
/** The control-plane routes also answer under this prefix (the self-hosted API host's paths). */
export const SELF_HOSTED_PREFIX = "/api-host";

export const RESERVED_ENV = {
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
    "NODE_",
    "LD_",
    "DYLD_",
    "NPM_CONFIG_",
  ],
  names: [
    "PATH",
    "HOME",
    "TMPDIR",
    "PORT",
    "HOST",
    "DATA_DIR",
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
  allowed: ["NODE_ENV"],
} as const;

/** Why an environment name is the platform's own, or undefined when a deployment may set it. */
export function reservedEnvName(name: string): string | undefined {
  const upper = name.toUpperCase();
  if ((RESERVED_ENV.allowed as readonly string[]).includes(upper)) return undefined;
  if ((RESERVED_ENV.names as readonly string[]).includes(upper))
    return `${name} is reserved: the platform sets it`;
  const prefix = RESERVED_ENV.prefixes.find((p) => upper.startsWith(p));
  return prefix
    ? `${name} is reserved: names starting with ${prefix} are the platform's settings`
    : undefined;
}

export const config = {
  get region() {
    return env("AWS_REGION") ?? "us-east-1";
  },
  /** True when running on the local cloud (npm start / tests): relaxes SSRF rules for loopback endpoints. */
  get localMode() {
    return env("PLATFORM_LOCAL") === "1";
  },
  get tablePrefix() {
    return env("TABLE_PREFIX") ?? "platform-";
  },
  get kmsKeyId() {
    return env("KMS_KEY_ID") ?? "alias/agent-platform";
  },
  get defaultBucket() {
    return env("PLATFORM_BUCKET") ?? "agent-platform";
  },
  /** Endpoint overrides for the local cloud; unset in AWS. */
  endpoint(service: "dynamodb" | "s3" | "kms" | "sfn" | "lambda" | "scheduler"): string | undefined {
    return env(`AWS_ENDPOINT_URL_${service.toUpperCase()}`);
  },
  /** Where browsers reach the API (OAuth redirect_uri); unset: the request's own scheme and host. */
  get publicBaseUrl() {
    return env("PUBLIC_BASE_URL")?.replace(/\/+$/, "");
  },
  /** Longest an OAuth wait request holds the connection (under API Gateway's 30 s integration limit). */
  get authWaitSeconds() {
    return int("AUTH_WAIT_SECONDS", 25);
  },
  get maxBodyBytes() {
    return int("MAX_BODY_BYTES", 20 * 1024 * 1024);
  },
  get authCacheMs() {
    return int("AUTH_CACHE_MS", 30_000);
  },
  /** How often an agent run's trace is ingested while the run goes on (and once more at its end). */
  get agentTraceFlushMs() {
    return int("AGENT_TRACE_FLUSH_MS", 1000);
  },
  get logLevel() {
    return (env("LOG_LEVEL") ?? "info") as "debug" | "info" | "warn" | "error";
  },
  /** Bulk export limits (spec B, "Limits"); tests shrink them. */
  export: {
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
