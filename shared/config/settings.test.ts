import { afterEach, describe, expect, it } from "vitest";
import { buildConfig, ConfigError, config, currentConfig, reservedEnvName, useConfig } from "../config.ts";
import { DEFAULT_MAX_REQUEST_BYTES, FAMILIES, SETTINGS } from "./settings.ts";

// The settings schema: what each variable accepts, what it refuses (naming the variable and what it expected),
// and the defaults the reference documents.

const refusal = (env: Record<string, string>) => {
  try {
    buildConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
};

describe("a value that used to fall back silently now stops the start, naming the variable", () => {
  it.each([
    ["EXPORT_MAX_RETRIES", "abc", "must be a whole number"],
    ["LOG_LEVEL", "verbose", "must be one of debug, info, warn, error"],
    ["AGENT_UNSANDBOXED", "yes", "must be one of true, false, 1, 0"],
    ["TRACE_TIER_DEFAULT", "short", "must be one of longlived, shortlived"],
    ["RUN_SHARDS", "four", "must be a whole number from 1 to 100"],
    ["AUTH_CACHE_MS", "1.5", "must be a whole number ≥ 0"],
    ["EXPORT_ENVIRONMENT_CREDENTIALS", "yes", "must be one of require, allow"],
    ["PLATFORM_LOCAL", "on", "must be one of true, false, 1, 0"],
    ["AGENT_RUN_WORKER", "thread", "must be one of process, lambda"],
    ["PUBLIC_BASE_URL", "example.com", "must be an http(s) URL"],
    ["AGENT_ORIGIN_FUNCTIONS", "{nope", "must be JSON"],
    ["AGENT_RUNTIME_LOG_RETENTION_DAYS", "31", "must be one of 1, 3, 5"],
  ])("%s=%s", (name, value, expected) => {
    const message = refusal({ [name]: value });
    expect(message).toContain(`${name} ${expected}`);
  });

  it("numbers out of range are refused with the range", () => {
    expect(refusal({ PORT: "70000" })).toContain("PORT must be a whole number from 0 to 65535");
    expect(refusal({ EXPORT_MAX_RETRIES: "-1" })).toContain("EXPORT_MAX_RETRIES must be a whole number");
    expect(refusal({ AGENT_TRACE_BODY_BYTES: "1024" })).toContain(
      "AGENT_TRACE_BODY_BYTES must be a whole number ≥ 65536",
    );
    expect(refusal({ AUTH_WAIT_SECONDS: "30" })).toContain(
      "AUTH_WAIT_SECONDS must be a whole number from 1 to 29",
    );
  });

  it("every bad variable is named at once", () => {
    const message = refusal({ LOG_LEVEL: "loud", RUN_SHARDS: "0", AWS_ENDPOINT_URL_S3: "s3" });
    expect(message).toContain("LOG_LEVEL must be");
    expect(message).toContain("RUN_SHARDS must be");
    expect(message).toContain("AWS_ENDPOINT_URL_S3 must be an http(s) URL");
  });

  it("a secret's value is never repeated in the error", () => {
    const message = refusal({ BUILD_JOB_URL: "s3cr3t-token-value" });
    expect(message).toContain("BUILD_JOB_URL must be an http(s) URL, got (hidden)");
    expect(message).not.toContain("s3cr3t");
  });
});

describe("booleans take exactly true, false, 1 or 0", () => {
  it.each([
    ["true", true],
    ["1", true],
    ["false", false],
    ["0", false],
  ])("AGENT_UNSANDBOXED=%s", (value, expected) => {
    expect(buildConfig({ AGENT_UNSANDBOXED: value }).sandbox.allowUnsandboxed).toBe(expected);
  });

  it.each(["TRUE", "yes", "on", " 1"])("AGENT_UNSANDBOXED=%j is refused", (value) => {
    expect(refusal({ AGENT_UNSANDBOXED: value })).toContain("AGENT_UNSANDBOXED must be");
  });
});

describe("defaults", () => {
  const defaults = buildConfig({});

  it("an empty variable is an unset one", () => {
    expect(buildConfig({ EXPORT_MAX_RETRIES: "", LOG_LEVEL: "" }).export.maxRetries).toBe(20);
  });

  it("the documented defaults are what an empty environment gets", () => {
    expect(defaults.export.maxRetries).toBe(20);
    expect(defaults.export.maxConcurrentRuns).toBe(45);
    expect(defaults.export.timeoutSeconds).toBe(72 * 3600);
    expect(defaults.export.environmentCredentials).toBe(false);
    expect(defaults.logLevel).toBe("info");
    expect(defaults.sandbox.allowUnsandboxed).toBe(false);
    expect(defaults.runs.defaultTraceTier).toBe("longlived");
    expect(defaults.runs.tierDays("shortlived")).toBe(14);
    expect(defaults.runs.tierDays("longlived")).toBe(400);
    expect(defaults.maxRequestBytes).toBe(DEFAULT_MAX_REQUEST_BYTES);
    expect(defaults.ingestBatchBytes).toBe(Math.floor(DEFAULT_MAX_REQUEST_BYTES / 2));
    expect(defaults.agent.traceBodyBytes).toBe(DEFAULT_MAX_REQUEST_BYTES);
    expect(defaults.agent.runWorker).toBe("process");
    expect(defaults.agent.runtimeLogRetentionDays).toBe(30);
    expect(defaults.region).toBe("us-east-1");
    expect(defaults.clientRegion).toBeUndefined();
    expect(defaults.artifactBucket).toBe("agent-platform");
    expect(defaults.sandbox.buildEgressAllow).toEqual(["registry.npmjs.org:443"]);
    expect(defaults.localCloud.port).toBe(8080);
  });

  it("each setting's parsed default is the one the reference shows", () => {
    for (const [name, schema] of Object.entries(SETTINGS)) {
      const shown = schema.setting.default;
      const value = (schema as { parse(v: unknown): unknown }).parse(undefined);
      if (shown === undefined) expect(value, name).toBeUndefined();
      else if (Array.isArray(value)) expect(value, name).toEqual([]);
      else if (typeof value === "object" && value !== null) expect(JSON.stringify(value), name).toBe(shown);
      else if (value !== undefined) expect(String(value), name).toBe(shown);
      // undefined with a default shown: the default is another setting's (INGEST_BATCH_BYTES: MAX_REQUEST_BYTES / 2)
      else expect(shown, name).toMatch(/[A-Z_]{4,}/);
    }
  });

  it("a value in range is taken as given", () => {
    const c = buildConfig({ EXPORT_MAX_RETRIES: "0", RUN_SHARDS: "100", TRACE_TIER_DEFAULT: "shortlived" });
    expect(c.export.maxRetries).toBe(0);
    expect(c.runs.shards).toBe(100);
    expect(c.runs.defaultTraceTier).toBe("shortlived");
  });
});

describe("families of variables", () => {
  it("TABLE_<ID>, STATE_MACHINE_<NAME>_ARN and AWS_ENDPOINT_URL_<SERVICE> are read by their variable part", () => {
    const c = buildConfig({
      TABLE_MAIN: "t-main",
      STATE_MACHINE_BULK_EXPORT_ARN: "arn:sm",
      AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9000",
    });
    expect(c.tableName("main")).toBe("t-main");
    expect(c.tableName("runs")).toBeUndefined();
    expect(c.wiring.stateMachineArn("bulk-export")).toBe("arn:sm");
    expect(c.endpoint("s3")).toBe("http://127.0.0.1:9000");
    expect(c.export.platformEndpoints.map(String)).toEqual(["http://127.0.0.1:9000/"]);
    expect(Object.keys(FAMILIES)).toHaveLength(3);
  });
});

describe("sealed settings", () => {
  it("win over the environment, give the credentials, and are never passed on", () => {
    const c = buildConfig(
      { TABLE_PREFIX: "env-", AWS_ACCESS_KEY_ID: "AKIAENV" },
      { TABLE_PREFIX: "sealed-", AWS_ACCESS_KEY_ID: "AKIASEALED", AWS_SECRET_ACCESS_KEY: "s" },
    );
    expect(c.tablePrefix).toBe("sealed-");
    expect(c.sealedCredentials).toEqual({ accessKeyId: "AKIASEALED", secretAccessKey: "s" });
    expect(c.text("TABLE_PREFIX")).toBeUndefined();
    expect(buildConfig({ TABLE_PREFIX: "env-" }).text("TABLE_PREFIX")).toBe("env-");
  });
});

describe("a value built from an explicit environment", () => {
  afterEach(() => useConfig(undefined));

  it("is what config answers while in use, instead of process.env", () => {
    useConfig(buildConfig({ EXPORT_MAX_RETRIES: "3" }));
    expect(config.export.maxRetries).toBe(3);
    expect(currentConfig().export.maxRetries).toBe(3);
  });
});

describe("every setting a deployment's runtime reads is reserved from its own environment", () => {
  it("a deployment may not set one (LANGGRAPH_CONFIG, its own, excepted)", () => {
    for (const [name, schema] of Object.entries(SETTINGS))
      if (schema.setting.readers.includes("runtime") && name !== "LANGGRAPH_CONFIG")
        expect(reservedEnvName(name), name).toBeDefined();
  });
});
