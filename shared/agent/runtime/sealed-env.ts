import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { s3 } from "../../aws/clients.ts";
import { config } from "../../config.ts";
import { type SealContext, type Sealed, sealRecord, unsealRecord } from "../../crypto/envelope.ts";

// A runtime's own environment (the deployment's secrets and langgraph.json env) at rest: sealed under the secrets
// key with its workspace and deployment as the encryption context, in an object of the artifact bucket beside
// the revision's code, never in the function's configuration (readable with lambda:GetFunction, 4 KB in all).
// The runtime opens it at init with a decrypt grant only its role has, for this context only (runtime/policy.ts).

/** The context a runtime's environment is sealed with; the runtime role may decrypt for its own only. */
export const runtimeEnvContext = (tenantId: string, deploymentId: string): SealContext => ({
  tenant_id: tenantId,
  deployment_id: deploymentId,
  purpose: "runtime-env",
});

/** Where a revision's sealed environment lives (under the runtime's code prefix, runtimes/<tenant>/<deployment>/). */
export const runtimeEnvKey = (tenantId: string, deploymentId: string, revisionId: string) =>
  `runtimes/${tenantId}/${deploymentId}/${revisionId}.env`;

/** Where the runtime finds its sealed environment (AGENT_RUNTIME_SECRETS): bucket and key. */
export interface SealedEnvRef {
  bucket: string;
  key: string;
}

/** Seals `env` for the deployment's runtime and stores it; answers where (the deploy step). */
export async function sealRuntimeEnv(
  tenantId: string,
  deploymentId: string,
  revisionId: string,
  env: Record<string, string>,
): Promise<SealedEnvRef> {
  const sealed = await sealRecord(env, runtimeEnvContext(tenantId, deploymentId));
  const ref = { bucket: config.artifactBucket, key: runtimeEnvKey(tenantId, deploymentId, revisionId) };
  await s3().send(
    new PutObjectCommand({
      Bucket: ref.bucket,
      Key: ref.key,
      Body: JSON.stringify(sealed),
      ContentType: "application/json",
    }),
  );
  return ref;
}

/** The runtime's environment, opened at init (the runtime, with its own role). */
export async function openRuntimeEnv(
  ref: SealedEnvRef,
  tenantId: string,
  deploymentId: string,
): Promise<Record<string, string>> {
  const out = await s3().send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }));
  const sealed = JSON.parse(await out.Body!.transformToString()) as Sealed;
  return unsealRecord(sealed, runtimeEnvContext(tenantId, deploymentId));
}
