import { afterEach, describe, expect, it } from "vitest";
import { localBuildEnv } from "./codebuild.ts";

// The local build step's environment is built as CodeBuild's is in AWS: the state's overrides (presigned URLs)
// and tool settings, none of the platform's tables, keys, endpoints or credentials from the parent's env.
const PLATFORM = {
  TABLE_PREFIX: "platform-secret-prefix-",
  KMS_KEY_ID: "alias/platform-key",
  AWS_ACCESS_KEY_ID: "AKIAPLATFORM",
  AWS_SECRET_ACCESS_KEY: "platform-secret-key",
  AWS_SESSION_TOKEN: "platform-session",
  AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:8000",
  AWS_ENDPOINT_URL_S3: "http://127.0.0.1:4569",
  ARTIFACT_BUCKET: "platform-artifacts",
  PLATFORM_BOOTSTRAP_TENANT: "bootstrap",
};
const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

describe("the local build step's environment", () => {
  it("holds the state's overrides and no table, key, endpoint or credential of the platform", () => {
    Object.assign(process.env, PLATFORM);
    const env = localBuildEnv(
      {
        EnvironmentVariablesOverride: [
          { Name: "BUILD_JOB_URL", Value: "http://s3/job?X-Amz-Signature=1" },
          { Name: "TENANT_ID", Value: "t1" },
        ],
      },
      "/data",
    );
    expect(env.BUILD_JOB_URL).toBe("http://s3/job?X-Amz-Signature=1");
    expect(env.TENANT_ID).toBe("t1");
    for (const name of Object.keys(PLATFORM)) expect(env[name], name).toBeUndefined();
    const values = Object.values(env).join("\n");
    for (const value of Object.values(PLATFORM)) expect(values).not.toContain(value);
    expect(Object.keys(env).filter((k) => /^AWS_|TABLE|KMS|BUCKET|API_KEY/.test(k))).toEqual([]);
  });
});
