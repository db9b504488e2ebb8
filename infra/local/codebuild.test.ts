import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { BUILD_ENV } from "../../shared/build/build-exchange.ts";
import { checkStartBuild, localBuildEnv, localCodeBuild } from "./codebuild.ts";

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

// Issue 33: a StartBuild that sets what the build exchange does not (NODE_OPTIONS=--import=data:…, PATH, a secret
// reference) would run the caller's code in the build step; the local CodeBuild refuses it before anything runs.
describe("the local CodeBuild's StartBuild", () => {
  const url = { Name: BUILD_ENV.job, Value: "http://s3/job?X-Amz-Signature=1" };

  it("takes the build exchange's variables, as plain text", () => {
    expect(() =>
      checkStartBuild({
        EnvironmentVariablesOverride: [url, { Name: BUILD_ENV.tenant, Value: "t1", Type: "PLAINTEXT" }],
      }),
    ).not.toThrow();
    expect(() => checkStartBuild({})).not.toThrow();
  });

  it.each([
    ["NODE_OPTIONS", [url, { Name: "NODE_OPTIONS", Value: "--import=data:text/javascript,1" }]],
    ["PATH", [{ Name: "PATH", Value: "/tmp/evil" }]],
    ["a secret reference", [{ ...url, Type: "SECRETS_MANAGER" }]],
    ["a value that is no string", [{ Name: BUILD_ENV.tenant, Value: 1 }]],
    ["an entry that is no object", [null]],
    ["overrides that are no list", { NODE_OPTIONS: "x" }],
  ])("refuses %s, before the build step is even bundled", async (_what, overrides) => {
    const input = { EnvironmentVariablesOverride: overrides } as Parameters<typeof checkStartBuild>[0];
    expect(() => checkStartBuild(input)).toThrow(/StartBuild refused/);
    await expect(localCodeBuild(tmpdir())(input)).rejects.toMatchObject({
      name: "CodeBuild.InvalidInputException",
    });
  });
});
