import { createHash } from "node:crypto";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { type PlatformRuntimeScope, runtimeBoundary } from "../../../shared/containment/runtime-policy.ts";
import { type Backend, withBackendToken } from "../backend-token.ts";
import { runBuildStep } from "../codebuild.ts";
import { localResourceArns } from "../platform-roles.ts";
import { localRuntimeScope } from "../policy-proxy/credentials.ts";
import { LOCAL_ACCOUNT } from "../policy-proxy/local-tables.ts";
import { S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } from "../s3.ts";
import { LocalCodeBuild } from "./codebuild.ts";
import { LocalIam } from "./iam.ts";
import { LambdaFunctions } from "./lambda-functions.ts";
import { LocalLogs } from "./logs.ts";

export { LocalCodeBuild } from "./codebuild.ts";
export { LocalIam } from "./iam.ts";
export { LambdaFunctions } from "./lambda-functions.ts";
export { LocalLogs } from "./logs.ts";

// The control plane of the local cloud's account (Lambda's functions, IAM's roles, CloudWatch Logs' groups, kept in
// DATA_DIR/aws; CodeBuild's project and builds), which the AWS emulator serves behind the policy proxy. Its managed policies are the platform's (the
// runtime boundary, rendered from the same generator as in the CDK app); its one layer is the runtime layer.

/** The local account's concurrency quota: AWS's default for an established account. */
export const LOCAL_ACCOUNT_CONCURRENCY = 1000;
/**
 * The local account's concurrent builds: room for the tests' parallel deploys (a new AWS account's quota can be 1
 * or less: the Build state retries AccountLimitExceededException there).
 */
export const LOCAL_ACCOUNT_CONCURRENT_BUILDS = 20;

export interface LocalControlPlane {
  iam: LocalIam;
  logs: LocalLogs;
  functions: LambdaFunctions;
  codebuild: LocalCodeBuild;
  /** An existing role's ARN and boundary (what the policy proxy checks IAM calls against). */
  iamRole(name: string): { arn: string; boundary?: string } | undefined;
}

/** Does the role's trust policy let Lambda assume it? */
function lambdaMayAssume(trust: string): boolean {
  try {
    const doc = JSON.parse(trust) as { Statement?: { Effect?: string; Principal?: { Service?: unknown } }[] };
    return (doc.Statement ?? []).some((s) => {
      const svc = s.Principal?.Service;
      return s.Effect === "Allow" && (Array.isArray(svc) ? svc : [svc]).includes("lambda.amazonaws.com");
    });
  } catch {
    return false;
  }
}

/**
 * What the deploy step is told about the local account (PLATFORM_RUNTIME_SCOPE, as the CDK app sets it in AWS): the
 * resources every runtime role's policy names, and the boundary every runtime role carries.
 */
export function localPlatformScope(region?: string): PlatformRuntimeScope & { boundaryArn: string } {
  const { tenant_id: _t, deployment_id: _d, ...scope } = localRuntimeScope("*", "*");
  return { ...scope, boundaryArn: localResourceArns(region).runtimeBoundary() };
}

export function localControlPlane(opts: {
  dataDir: string;
  region: string;
  /** s3rver, where functions' code is read from (with this start's token). */
  s3: () => Backend;
}): LocalControlPlane {
  const arns = localResourceArns(opts.region);
  const { boundaryArn, ...platformScope } = localPlatformScope(opts.region);
  const iam = new LocalIam({
    dataDir: opts.dataDir,
    account: LOCAL_ACCOUNT,
    managedPolicies: { [boundaryArn]: runtimeBoundary(platformScope) },
  });
  let s3: S3Client | undefined;
  const functions = new LambdaFunctions({
    dataDir: opts.dataDir,
    region: opts.region,
    account: LOCAL_ACCOUNT,
    accountConcurrency: LOCAL_ACCOUNT_CONCURRENCY,
    layers: [arns.runtimeLayer()],
    roleAssumable: (arn) => {
      const role = iam.roleOfArn(arn);
      return role !== undefined && lambdaMayAssume(role.AssumeRolePolicyDocument);
    },
    // Lambda reads the code object at create and update: its size and hash, or NoSuchKey.
    codeObject: async ({ S3Bucket, S3Key }) => {
      const backend = opts.s3();
      s3 ??= withBackendToken(
        new S3Client({
          endpoint: backend.endpoint,
          region: opts.region,
          forcePathStyle: true,
          credentials: { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY },
        }),
        backend.token,
      );
      const body = await s3
        .send(new GetObjectCommand({ Bucket: S3Bucket, Key: S3Key }))
        .then((o) => o.Body?.transformToByteArray())
        .catch((err) => {
          if (err?.name === "NoSuchKey" || err?.name === "NoSuchBucket") return undefined;
          throw err;
        });
      return body && { size: body.length, sha256: createHash("sha256").update(body).digest("base64") };
    },
  });
  return {
    iam,
    functions,
    codebuild: new LocalCodeBuild({
      dataDir: opts.dataDir,
      region: opts.region,
      account: LOCAL_ACCOUNT,
      accountConcurrentBuilds: LOCAL_ACCOUNT_CONCURRENT_BUILDS,
      run: runBuildStep,
    }),
    logs: new LocalLogs({ dataDir: opts.dataDir, region: opts.region, account: LOCAL_ACCOUNT }),
    iamRole: (name) => {
      const r = iam.role(name);
      return r && { arn: r.Arn, ...(r.PermissionsBoundary ? { boundary: r.PermissionsBoundary } : {}) };
    },
  };
}
