import { randomBytes } from "node:crypto";
import { config } from "../../../shared/config.ts";
import type { RuntimeScope } from "../../../shared/containment/runtime-policy.ts";
import { tableName } from "../../../shared/tables.ts";
import { LOCAL_ACCOUNT } from "./local-tables.ts";
import type { ServiceArns } from "./service-request.ts";

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

/** The local cloud's two KMS keys, as ARNs: the data key and the secrets key. */
export function localKeyArns(region = config.region) {
  return {
    data: `arn:aws:kms:${region}:${LOCAL_ACCOUNT}:key/local`,
    secrets: `arn:aws:kms:${region}:${LOCAL_ACCOUNT}:key/local-secrets`,
  };
}

/**
 * How the proxy names the local KMS's keys: a KeyId (the local KMS_KEY_ID and SECRETS_KEY_ID, their ids or ARNs)
 * as its key's ARN, and a ciphertext's key. The local KMS wraps with one master key, so a Decrypt that names no
 * key is checked as one of the secrets key (what callers decrypt through the proxy: sealed secrets).
 */
export function localKmsKeys(region = config.region): Pick<ServiceArns, "kmsKey" | "kmsKeyOfCiphertext"> {
  const arns = localKeyArns(region);
  const byId: Record<string, string> = {
    [arns.data]: arns.data,
    local: arns.data,
    "alias/local": arns.data,
    [config.kmsKeyId]: arns.data,
    [arns.secrets]: arns.secrets,
    "local-secrets": arns.secrets,
    [config.secretsKeyId]: arns.secrets,
  };
  return {
    kmsKey: (id) => (Object.hasOwn(byId, id) ? byId[id] : undefined),
    kmsKeyOfCiphertext: () => arns.secrets,
  };
}

/** The scope runtimePolicy() is given for a deployment on the local cloud: its ARNs in the local account. */
export function localRuntimeScope(tenantId: string, deploymentId: string): RuntimeScope {
  const region = config.region;
  const keys = localKeyArns(region);
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
    keyArn: keys.data,
    artifactBucketArn: `arn:aws:s3:::${config.artifactBucket}`,
    secretsKeyArn: keys.secrets,
    traceFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT}:function:AgentTraceIngest`,
  };
}
