import { CreateBucketCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { afterEach, expect, it } from "vitest";
import { handler as purgeDataTask } from "../functions/tasks/purge-deployment-data.ts";
import { placeParts } from "../shared/agent/checkpoint/blobs.ts";
import { purgeDeploymentData } from "../shared/agent/cleanup/purge.ts";
import { s3 } from "../shared/aws/clients.ts";
import { putItem } from "../shared/aws/ddb.ts";
import { PURGE_MAX_ATTEMPTS, purgeFailed, purgeToResume } from "../shared/control/deployment-lifecycle.ts";
import { agentKeys, checkpointPk } from "../shared/records/agent.ts";
import { s3ThreadPrefix } from "../shared/records/checkpoint-keys.ts";
import { deploymentPurges } from "../shared/records/control.ts";
import "./helpers/cloud.ts";

// Issue 26 (finding 3): in AWS a runtime knows only PLATFORM_BUCKET while the platform's tasks also know
// ARTIFACT_BUCKET. Checkpoint blobs must be in one bucket for both, or the purge deletes where nothing is.
const platformBucket = process.env.PLATFORM_BUCKET!;
const saved = { ARTIFACT_BUCKET: process.env.ARTIFACT_BUCKET, PLATFORM_BUCKET: platformBucket };
afterEach(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});
const exists = (Bucket: string, Key: string) =>
  s3()
    .send(new HeadObjectCommand({ Bucket, Key }))
    .then(
      () => true,
      () => false,
    );

it("checkpoint blobs live in the platform bucket, whatever ARTIFACT_BUCKET names, and the purge deletes them there", async () => {
  const artifacts = `artifacts-${crypto.randomUUID().slice(0, 8)}`;
  await s3().send(new CreateBucketCommand({ Bucket: artifacts }));
  process.env.ARTIFACT_BUCKET = artifacts;
  const tenant = crypto.randomUUID();
  const deployment = crypto.randomUUID();
  const scope = `${tenant}#${deployment}`;
  const thread = crypto.randomUUID();
  const key = `${s3ThreadPrefix(scope, thread)}%/1/values/big`;
  const record: Record<string, unknown> = {};
  await placeParts(record, [{ attr: "value", bytes: new Uint8Array(400_000), key }], 300_000);
  expect(record.value_ref).toBe(key);
  expect(await exists(platformBucket, key)).toBe(true);
  expect(await exists(artifacts, key)).toBe(false);

  await putItem("main", { PK: agentKeys.threadsPk(scope), SK: thread });
  await putItem("checkpoints", { PK: checkpointPk(scope, thread), SK: "v", kind: "value", value_ref: key });
  await purgeDeploymentData(tenant, deployment);
  expect(await exists(platformBucket, key)).toBe(false);
});

async function tombstone(attempts?: number) {
  const tenant = crypto.randomUUID();
  const id = crypto.randomUUID();
  await deploymentPurges.put({
    tenant_id: tenant,
    deployment_id: id,
    tracing_project_id: null,
    delete_tracing_project: false,
    created_at: new Date(Date.now() - 3600_000).toISOString(),
    ...(attempts ? { attempts } : {}),
  });
  return { tenant, id, get: () => deploymentPurges.get({ tenant, id }, true) };
}

it("a purge whose delete fails records why on its tombstone instead of throwing", async () => {
  const t = await tombstone();
  const scope = `${t.tenant}#${t.id}`;
  const thread = crypto.randomUUID();
  await putItem("main", { PK: agentKeys.threadsPk(scope), SK: thread });
  await putItem("checkpoints", {
    PK: checkpointPk(scope, thread),
    SK: "v",
    kind: "value",
    value_ref: `${s3ThreadPrefix(scope, thread)}x`,
  });
  // A real failing delete: the bucket does not exist.
  process.env.PLATFORM_BUCKET = `missing-${crypto.randomUUID().slice(0, 8)}`;
  await expect(purgeDataTask({ tenant_id: t.tenant, deployment_id: t.id })).resolves.toEqual({
    failed: "NoSuchBucket",
  });
  const after = (await t.get())!;
  expect(after.attempts).toBe(1);
  expect(after.error).toMatch(/^NoSuchBucket: /);
  expect(after.done_at).toBeUndefined();
  expect(after.failed_at).toBeUndefined();
});

it("a denied call gives the purge up at once; the sweeper resumes it no more", async () => {
  const t = await tombstone();
  const denied = Object.assign(new Error("S3 DeleteObjects failed for checkpoints/x: AccessDenied"), {
    name: "AccessDenied",
  });
  await purgeFailed(t.tenant, t.id, denied);
  const after = (await t.get())!;
  expect(after.failed_at).toBeDefined();
  expect(after.error).toBe("AccessDenied: S3 DeleteObjects failed for checkpoints/x: AccessDenied");
  expect(purgeToResume(after, Date.now() + 3600_000)).toBe(false);
  expect(purgeToResume({ ...after, failed_at: undefined }, Date.now() + 3600_000)).toBe(true);
});

it(`a purge failing ${PURGE_MAX_ATTEMPTS} times is given up`, async () => {
  const t = await tombstone(PURGE_MAX_ATTEMPTS - 2);
  await purgeFailed(t.tenant, t.id, new Error("throttled"));
  expect((await t.get())!.failed_at).toBeUndefined();
  await purgeFailed(t.tenant, t.id, new Error("throttled"));
  const after = (await t.get())!;
  expect(after.attempts).toBe(PURGE_MAX_ATTEMPTS);
  expect(after.failed_at).toBeDefined();
  expect(after.error).toBe("Error: throttled");
});
