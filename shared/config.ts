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
  get maxBodyBytes() {
    return int("MAX_BODY_BYTES", 20 * 1024 * 1024);
  },
  get authCacheMs() {
    return int("AUTH_CACHE_MS", 30_000);
  },
  get logLevel() {
    return (env("LOG_LEVEL") ?? "info") as "debug" | "info" | "warn" | "error";
  },
  get version() {
    return env("PLATFORM_VERSION") ?? "0.1.0";
  },
};
