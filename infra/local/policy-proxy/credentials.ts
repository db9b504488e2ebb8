import { randomBytes } from "node:crypto";
import type { RuntimeScope } from "../../../shared/agent/runtime/policy.ts";
import { config } from "../../../shared/config.ts";
import { tableName } from "../../../shared/tables.ts";
import { LOCAL_ACCOUNT } from "./local-tables.ts";

/** A runtime's own access key pair, shaped as AWS's (AKIA… id, 40-character secret). */
export function mintRuntimeCredentials(): { accessKeyId: string; secretAccessKey: string } {
  const id = randomBytes(10)
    .toString("base64url")
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "7")
    .slice(0, 16)
    .padEnd(16, "7");
  return { accessKeyId: `AKIA${id}`, secretAccessKey: randomBytes(30).toString("base64") };
}

/** The scope runtimePolicy() is given for a deployment on the local cloud: its ARNs in the local account. */
export function localRuntimeScope(tenantId: string, deploymentId: string): RuntimeScope {
  const region = config.region;
  const table = (id: "main" | "checkpoints") =>
    `arn:aws:dynamodb:${region}:${LOCAL_ACCOUNT}:table/${tableName(id)}`;
  return {
    partition: "aws",
    region,
    account: LOCAL_ACCOUNT,
    tenant_id: tenantId,
    deployment_id: deploymentId,
    tables: { main: table("main"), checkpoints: table("checkpoints") },
    bucketArn: `arn:aws:s3:::${config.checkpointBucket}`,
    keyArn: `arn:aws:kms:${region}:${LOCAL_ACCOUNT}:key/local`,
    artifactBucketArn: `arn:aws:s3:::${config.artifactBucket}`,
    secretsKeyArn: `arn:aws:kms:${region}:${LOCAL_ACCOUNT}:key/local-secrets`,
    traceFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT}:function:AgentTraceIngest`,
  };
}
