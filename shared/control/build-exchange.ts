import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { s3 } from "../aws/clients.ts";
import { LOG_TYPE } from "../build/buffered-log.ts";
import {
  BUILD_ENV,
  type BuildAttempt,
  type BuildJob,
  type BuildResult,
  type BuildUrls,
  buildResult,
  exchangeKeys,
  exchangePrefix,
} from "../build/build-exchange.ts";
import { config } from "../config.ts";
import { BuildError } from "../errors.ts";
import type { RevisionRecord } from "../records/control.ts";
import { logKey } from "./revisions.ts";

// The platform's side of a build (shared/build/build-exchange.ts): it writes the job, presigns the build's few
// keys, and afterwards reads what the build sent. The build's own role holds no S3, DynamoDB or KMS grant.

/**
 * The URLs live as long as a pipeline may (the revision machine's TimeoutSeconds, 2 h: retries, CodeBuild's
 * queue and the build may together pass an hour). A URL signed with a Lambda role's session still ends with that
 * session, which AWS does not promise to keep for as long (docs/aws.md).
 */
export const BUILD_URL_SECONDS = 7200;

type Revision = Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">;
export interface BuildEnvOverride {
  Name: string;
  Type: "PLAINTEXT";
  Value: string;
}

/** Stores the job of a new attempt and returns the build's environment: its presigned URLs and its workspace. */
export async function openBuildExchange(
  r: Revision,
  job: BuildJob,
): Promise<{ attempt: string; env: BuildEnvOverride[] }> {
  const Bucket = config.artifactBucket;
  const attempt = crypto.randomUUID();
  const keys = exchangeKeys({ ...r, attempt });
  await s3().send(
    new PutObjectCommand({
      Bucket,
      Key: keys.job,
      Body: JSON.stringify(job),
      ContentType: "application/json",
    }),
  );
  const expiresIn = BUILD_URL_SECONDS;
  const urls: BuildUrls = {
    job: await getSignedUrl(s3(), new GetObjectCommand({ Bucket, Key: keys.job }), { expiresIn }),
    jobDelete: await getSignedUrl(s3(), new DeleteObjectCommand({ Bucket, Key: keys.job }), { expiresIn }),
    log: await getSignedUrl(
      s3(),
      new PutObjectCommand({ Bucket, Key: logKey(r, "build"), ContentType: LOG_TYPE }),
      { expiresIn },
    ),
    artifact: await getSignedUrl(s3(), new PutObjectCommand({ Bucket, Key: keys.artifact }), { expiresIn }),
    result: await getSignedUrl(s3(), new PutObjectCommand({ Bucket, Key: keys.result }), { expiresIn }),
  };
  const env: BuildEnvOverride[] = [
    ...Object.entries(urls).map(([k, Value]) => ({
      Name: BUILD_ENV[k as keyof BuildUrls],
      Type: "PLAINTEXT" as const,
      Value,
    })),
    { Name: BUILD_ENV.tenant, Type: "PLAINTEXT", Value: r.tenant_id },
  ];
  return { attempt, env };
}

async function body(key: string): Promise<Uint8Array | undefined> {
  try {
    const out = await s3().send(new GetObjectCommand({ Bucket: config.artifactBucket, Key: key }));
    return await out.Body!.transformToByteArray();
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e?.name === "NoSuchKey" || e?.$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  }
}

/** What the build reported (untrusted: checked against the schema). */
export async function buildOutcome(r: BuildAttempt): Promise<BuildResult> {
  const raw = await body(exchangeKeys(r).result);
  if (!raw) throw new BuildError("the build step ended without a result");
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(raw).toString("utf8"));
  } catch {
    json = undefined;
  }
  const parsed = buildResult.safeParse(json);
  if (!parsed.success) throw new BuildError("the build step's result is not readable");
  return parsed.data;
}

/** The artifact the build sent, as it sent it. */
export async function builtArtifact(r: BuildAttempt): Promise<Uint8Array> {
  const raw = await body(exchangeKeys(r).artifact);
  if (!raw) throw new BuildError("the build step sent no artifact");
  return raw;
}

/**
 * Removes the attempt's objects, every version of them (the bucket is versioned, and the job held the token and
 * the deployment's secrets); s3rver keeps no versions and answers the listing with an error.
 */
export async function closeBuildExchange(a: BuildAttempt): Promise<void> {
  const Bucket = config.artifactBucket;
  let objects: { Key: string; VersionId?: string }[] = Object.values(exchangeKeys(a)).map((Key) => ({ Key }));
  try {
    const page = await s3().send(new ListObjectVersionsCommand({ Bucket, Prefix: exchangePrefix(a) }));
    const versions = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])];
    if (versions.length) objects = versions.map((v) => ({ Key: v.Key!, VersionId: v.VersionId! }));
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
    if (status !== 405 && status !== 501) throw err;
  }
  await s3().send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: objects, Quiet: true } }));
}
