import { GetObjectCommand } from "@aws-sdk/client-s3";
import { expect, it } from "vitest";
import { runtimeEnvironment } from "../shared/agent/runtime/lambda-host.ts";
import { openRuntimeEnv, sealRuntimeEnv } from "../shared/agent/runtime/sealed-env.ts";
import { s3 } from "../shared/aws/clients.ts";
import "./helpers/cloud.ts";

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
