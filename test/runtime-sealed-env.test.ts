import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localKmsKeys } from "../infra/local/policy-proxy/credentials.ts";
import { runtimeEnvironment } from "../shared/agent/hosting/lambda-host.ts";
import { openRuntimeEnv, runtimeEnvContext, sealRuntimeEnv } from "../shared/agent/runtime/sealed-env.ts";
import { s3 } from "../shared/aws/clients.ts";
import { config } from "../shared/config.ts";
import type { Sealed } from "../shared/crypto/envelope.ts";
import "./helpers/cloud.ts";
import { runtimePrincipal, startRuntimeProxy } from "./helpers/runtime-proxy.ts";

// Issue 26 (finding 4): a runtime function's secrets were plain environment variables (readable with
// lambda:GetFunction, 4 KB in all). They are sealed at deploy and opened by the runtime at init, with its
// workspace and deployment as the encryption context (the local KMS enforces it as KMS does).
const secret = `sk-${crypto.randomUUID()}`;
const tenant = crypto.randomUUID();
const deployment = crypto.randomUUID();

it("seals a runtime's environment at rest, and only its own deployment's context opens it", async () => {
  const big = "x".repeat(6000); // more than a function's whole environment could hold
  const ref = await sealRuntimeEnv(tenant, deployment, "r1", { OPENAI_API_KEY: secret, BIG: big });
  const raw = await (
    await s3().send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }))
  ).Body!.transformToString();
  expect(raw).not.toContain(secret);
  expect(ref.key).toBe(`runtimes/${tenant}/${deployment}/r1.env`);
  expect(await openRuntimeEnv(ref, tenant, deployment)).toEqual({ OPENAI_API_KEY: secret, BIG: big });
  await expect(openRuntimeEnv(ref, tenant, crypto.randomUUID())).rejects.toThrow();
  await expect(openRuntimeEnv(ref, crypto.randomUUID(), deployment)).rejects.toThrow();
});

it("a runtime function's configuration holds where its environment is, never a secret", async () => {
  const ref = await sealRuntimeEnv(tenant, deployment, "r2", { OPENAI_API_KEY: secret });
  const vars = runtimeEnvironment(
    {
      tenant_id: tenant,
      deployment_id: deployment,
      revision_id: "r2",
      artifact_dir: "/nowhere",
      graphs: [],
      tracing_project_id: null,
    },
    "token",
    ref,
  );
  expect(JSON.stringify(vars)).not.toContain(secret);
  expect(vars.OPENAI_API_KEY).toBeUndefined();
  expect(JSON.parse(vars.AGENT_RUNTIME_SECRETS)).toEqual(ref);
});

describe("on the local cloud, the runtime opens it through the policy proxy, held to its role's policy", () => {
  const runtime = runtimePrincipal(tenant, deployment);
  const creds = { accessKeyId: runtime.accessKeyId, secretAccessKey: runtime.secretAccessKey };
  let proxy: Awaited<ReturnType<typeof startRuntimeProxy>>;
  let client: KMSClient;
  beforeAll(async () => {
    proxy = await startRuntimeProxy(runtime, { kms: localKmsKeys() });
    const endpoint = proxy.endpoint;
    client = new KMSClient({ endpoint, region: config.region, credentials: creds, maxAttempts: 1 });
  });
  afterAll(async () => {
    client.destroy();
    await proxy.close();
  });
  const sealedKey = async (t: string, d: string) => {
    const ref = await sealRuntimeEnv(t, d, "r3", { OPENAI_API_KEY: secret });
    const raw = await (
      await s3().send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }))
    ).Body!.transformToString();
    return Buffer.from((JSON.parse(raw) as Sealed).key, "base64");
  };

  it("decrypts its own environment's data key", async () => {
    const out = await client.send(
      new DecryptCommand({
        CiphertextBlob: await sealedKey(tenant, deployment),
        EncryptionContext: runtimeEnvContext(tenant, deployment),
      }),
    );
    expect(out.Plaintext?.length).toBe(32);
  });

  it("is denied another deployment's, and any KMS call but Decrypt", async () => {
    const other = crypto.randomUUID();
    await expect(
      client.send(
        new DecryptCommand({
          CiphertextBlob: await sealedKey(tenant, other),
          EncryptionContext: runtimeEnvContext(tenant, other),
        }),
      ),
    ).rejects.toMatchObject({ name: "AccessDeniedException" });
    await expect(
      client.send(new DecryptCommand({ CiphertextBlob: await sealedKey(tenant, deployment) })),
    ).rejects.toMatchObject({ name: "AccessDeniedException" });
    await expect(
      client.send(
        new GenerateDataKeyCommand({
          // The secrets key itself: its policy lets the runtime decrypt its own context, nothing else.
          KeyId: config.secretsKeyId,
          KeySpec: "AES_256",
          EncryptionContext: runtimeEnvContext(tenant, deployment),
        }),
      ),
    ).rejects.toMatchObject({ name: "AccessDeniedException" });
  });
});
