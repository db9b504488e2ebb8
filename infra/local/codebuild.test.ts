import { afterEach, describe, expect, it } from "vitest";
import { BUILD_ENV } from "../../shared/build/build-exchange.ts";
import { setEnvironment } from "../../shared/config.ts";
import { BUILD_PROJECT_NAME } from "../build/project.ts";
import { checkBuildOverrides, localBuildEnv } from "./codebuild.ts";
import { LocalCodeBuild } from "./control-plane/codebuild.ts";

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
let restore = () => {};
afterEach(() => restore());

describe("the local build step's environment", () => {
  it("holds the state's overrides and no table, key, endpoint or credential of the platform", () => {
    restore = setEnvironment(PLATFORM);
    const env = localBuildEnv(
      {
        overrides: [
          { name: "BUILD_JOB_URL", value: "http://s3/job?X-Amz-Signature=1" },
          { name: "TENANT_ID", value: "t1" },
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
  const url = { name: BUILD_ENV.job, value: "http://s3/job?X-Amz-Signature=1" };
  let ran = 0;
  const codebuild = new LocalCodeBuild({
    dataDir: "/data",
    region: "us-east-1",
    account: "000000000000",
    accountConcurrentBuilds: 1,
    run: () => {
      ran++;
      throw new Error("a refused build must not run");
    },
  });

  it("takes the build exchange's variables, as plain text", () => {
    expect(() =>
      checkBuildOverrides([url, { name: BUILD_ENV.tenant, value: "t1", type: "PLAINTEXT" }]),
    ).not.toThrow();
    expect(() => checkBuildOverrides(undefined)).not.toThrow();
  });

  it.each([
    ["NODE_OPTIONS", [url, { name: "NODE_OPTIONS", value: "--import=data:text/javascript,1" }]],
    ["PATH", [{ name: "PATH", value: "/tmp/evil" }]],
    ["a secret reference", [{ ...url, type: "SECRETS_MANAGER" }]],
    ["a value that is no string", [{ name: BUILD_ENV.tenant, value: 1 }]],
    ["an entry that is no object", [null]],
    ["overrides that are no list", { NODE_OPTIONS: "x" }],
  ])("refuses %s, before the build step is even bundled", async (_what, overrides) => {
    expect(() => checkBuildOverrides(overrides)).toThrow(/StartBuild refused/);
    await expect(
      Promise.resolve().then(() =>
        codebuild.handle("StartBuild", {
          projectName: BUILD_PROJECT_NAME,
          environmentVariablesOverride: overrides,
        }),
      ),
    ).rejects.toMatchObject({ code: "InvalidInputException", status: 400 });
    expect(ran).toBe(0);
  });
});
