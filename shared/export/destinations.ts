import { randomUUID } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { DeleteObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { z } from "zod";
import { getItem, type Item, putItem, queryPage, toItem } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { type Sealed, sealRecord, unsealRecord } from "../crypto/envelope.ts";
import { BadRequest, NotFound, ValidationFailed } from "../errors.ts";
import { logger } from "../log.ts";
import { canonicalTime } from "../runs/time.ts";

// Export destinations: an S3 (or S3-compatible) bucket and prefix, with credentials sealed by KMS envelope
// encryption (write-only: only their field names are ever shown). Creation proves write access by writing a
// test object, then deleting it.
//   record  PK T#<tenant>#BULKEXPORTDEST  SK <id>   GSI1 T#<tenant>#BULKEXPORTDESTS / <created>#<id>
const pk = (tenant: string) => `T#${tenant}#BULKEXPORTDEST`;
const listPk = (tenant: string) => `T#${tenant}#BULKEXPORTDESTS`;

/** Errors the export must not retry: the destination itself is wrong (credentials, bucket, permissions). */
export class DestinationError extends Error {
  override name = "DestinationError";
}

// S3 bucket naming rules (general purpose buckets).
const BUCKET =
  /^(?!xn--)(?!sthree-)(?!.*-s3alias$)(?!.*--ol-s3$)(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export const DestinationCreate = z.looseObject({
  destination_type: z
    .string()
    .refine((t) => t === "s3" || t === "objstore", "destination_type must be s3")
    .default("s3"),
  display_name: z.string().min(1).max(255),
  config: z.looseObject({
    bucket_name: z
      .string()
      .refine((b) => BUCKET.test(b) && !b.includes(".."), "bucket_name is not a valid S3 bucket name"),
    prefix: z
      .string()
      .max(900)
      .default("")
      .transform((p) => p.replace(/^\/+|\/+$/g, "")),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, "region is not an AWS region name")
      .nullish(),
    endpoint_url: z.string().max(2048).nullish(),
    include_bucket_in_prefix: z.boolean().nullish(),
  }),
  credentials: z
    .looseObject({
      access_key_id: z.string().min(1).max(256),
      secret_access_key: z.string().min(1).max(1024),
      session_token: z.string().min(1).max(8192).nullish(),
    })
    .nullish(),
});
export type DestinationCreateIn = z.output<typeof DestinationCreate>;

export const DestinationOut = z.object({
  id: z.uuid(),
  tenant_id: z.string(),
  destination_type: z.literal("s3"),
  display_name: z.string(),
  config: z.object({
    bucket_name: z.string(),
    prefix: z.string(),
    region: z.string().nullable(),
    endpoint_url: z.string().nullable(),
    include_bucket_in_prefix: z.boolean(),
  }),
  created_at: z.string(),
  updated_at: z.string(),
  credentials_keys: z.array(z.string()),
});
export type Destination = z.output<typeof DestinationOut>;

// — SSRF guard —

/** Whether an IP address is loopback, link-local, private, unspecified or otherwise not a public endpoint. */
export function isInternalAddress(address: string): boolean {
  const kind = isIP(address);
  if (kind === 4) {
    const [a, b] = address.split(".").map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  if (kind === 6) {
    const v = address.toLowerCase();
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v);
    if (mapped) return isInternalAddress(mapped[1]);
    return v === "::" || v === "::1" || /^fe[89ab]/.test(v) || /^f[cd]/.test(v) || v.startsWith("ff");
  }
  return true;
}

/**
 * Checks an endpoint_url: http(s), no credentials in it, and — outside local mode — no host that is or
 * resolves to an internal address (no reaching the cloud's metadata service or the VPC through an export).
 * Returns the problem, or undefined when the URL is acceptable.
 */
export async function endpointProblem(
  raw: string,
  local = config.localMode,
  resolve: (host: string) => Promise<string[]> = async (h) =>
    (await lookup(h, { all: true })).map((a) => a.address),
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "endpoint_url is not a valid URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return "endpoint_url must be an http or https URL";
  if (url.username || url.password) return "endpoint_url must not carry credentials";
  if (local) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".internal"))
    return "endpoint_url must be a public endpoint";
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await resolve(host);
  } catch {
    return "Invalid endpoint";
  }
  if (!addresses.length || addresses.some(isInternalAddress)) return "endpoint_url must be a public endpoint";
  return undefined;
}

// — S3 errors —

export type S3ErrorKind = "access_denied" | "bucket_invalid" | "key_id" | "endpoint" | "retryable";
export const DESTINATION_MESSAGES: Record<Exclude<S3ErrorKind, "retryable">, string> = {
  access_denied: "Access denied",
  bucket_invalid: "Bucket is not valid",
  key_id: "Key ID you provided does not exist",
  endpoint: "Invalid endpoint",
};

/** What an S3 SDK error means for a destination: one of the spec's four errors, or a retryable fault. */
export function classifyS3Error(err: unknown): { kind: S3ErrorKind; message: string } {
  const e = (err ?? {}) as {
    name?: string;
    Code?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const code = e.name ?? e.Code ?? e.code ?? "";
  const status = e.$metadata?.httpStatusCode;
  const kind = ((): S3ErrorKind => {
    if (code === "InvalidAccessKeyId") return "key_id";
    if (
      [
        "AccessDenied",
        "SignatureDoesNotMatch",
        "InvalidToken",
        "ExpiredToken",
        "AllAccessDisabled",
        "AccountProblem",
      ].includes(code)
    )
      return "access_denied";
    if (
      [
        "NoSuchBucket",
        "InvalidBucketName",
        "PermanentRedirect",
        "AuthorizationHeaderMalformed",
        "IllegalLocationConstraintException",
      ].includes(code)
    )
      return "bucket_invalid";
    if (
      [
        "ECONNREFUSED",
        "ENOTFOUND",
        "EAI_AGAIN",
        "EHOSTUNREACH",
        "ENETUNREACH",
        "CERT_HAS_EXPIRED",
        "DEPTH_ZERO_SELF_SIGNED_CERT",
        "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      ].includes(code)
    )
      return "endpoint";
    if (status === 403) return "access_denied";
    if (status === 404 || status === 301) return "bucket_invalid";
    if (code === "TimeoutError" || code === "RequestTimeout" || code === "SlowDown" || code === "Throttling")
      return "retryable";
    if (status !== undefined && (status >= 500 || status === 429)) return "retryable";
    // A response that is not S3's (HTML, no XML error code) or no response at all.
    if (status === undefined || code === "Unknown" || code === "UnknownError" || code === "Error")
      return "endpoint";
    return "retryable";
  })();
  return {
    kind,
    message:
      kind === "retryable"
        ? `${code || "Error"}: ${(err as Error)?.message ?? err}`
        : DESTINATION_MESSAGES[kind],
  };
}

// — clients and keys —

/** The key prefix exports write under: the prefix, led by the bucket name when include_bucket_in_prefix. */
export function destinationRoot(cfg: Destination["config"]): string {
  return [cfg.include_bucket_in_prefix ? cfg.bucket_name : "", cfg.prefix].filter(Boolean).join("/");
}

function clientFor(
  cfg: Destination["config"],
  creds: Record<string, string> | undefined,
  quick = false,
): S3Client {
  return new S3Client({
    region: cfg.region ?? config.region,
    ...(cfg.endpoint_url ? { endpoint: cfg.endpoint_url, forcePathStyle: true } : {}),
    ...(creds
      ? {
          credentials: {
            accessKeyId: creds.access_key_id,
            secretAccessKey: creds.secret_access_key,
            ...(creds.session_token ? { sessionToken: creds.session_token } : {}),
          },
        }
      : {}),
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    // No SDK retries: creation fails fast on a dead endpoint, and an export's failed write is retried by the
    // state machine (30 s fixed) and recorded on the run as retry_<n>, as the spec describes.
    maxAttempts: 1,
    requestHandler: { connectionTimeout: quick ? 5_000 : 30_000, requestTimeout: quick ? 10_000 : 300_000 },
  });
}

const context = (tenant: string, id: string) => ({
  tenant_id: tenant,
  record: `bulk-export-destination/${id}`,
});

function toDestination(item: Item): Destination {
  return {
    id: item.id,
    tenant_id: item.tenant_id,
    destination_type: "s3",
    display_name: item.display_name,
    config: {
      bucket_name: item.config.bucket_name,
      prefix: item.config.prefix ?? "",
      region: item.config.region ?? null,
      endpoint_url: item.config.endpoint_url ?? null,
      include_bucket_in_prefix: item.config.include_bucket_in_prefix ?? false,
    },
    created_at: item.created_at,
    updated_at: item.updated_at,
    credentials_keys: item.credentials_keys ?? [],
  };
}

/** Validates, proves write access with a test object, then stores the destination (credentials sealed). */
export async function createDestination(tenant: string, body: DestinationCreateIn): Promise<Destination> {
  if (body.config.endpoint_url) {
    const problem = await endpointProblem(body.config.endpoint_url);
    if (problem)
      throw new ValidationFailed([
        { loc: ["body", "config", "endpoint_url"], msg: problem, type: "value_error" },
      ]);
  }
  const id = randomUUID();
  const now = canonicalTime(Date.now())!;
  const destination: Destination = {
    id,
    tenant_id: tenant,
    destination_type: "s3",
    display_name: body.display_name,
    config: {
      bucket_name: body.config.bucket_name,
      prefix: body.config.prefix,
      region: body.config.region ?? null,
      endpoint_url: body.config.endpoint_url ?? null,
      include_bucket_in_prefix: body.config.include_bucket_in_prefix ?? false,
    },
    created_at: now,
    updated_at: now,
    credentials_keys: [],
  };
  const creds = body.credentials
    ? Object.fromEntries(
        Object.entries({
          access_key_id: body.credentials.access_key_id,
          secret_access_key: body.credentials.secret_access_key,
          session_token: body.credentials.session_token ?? undefined,
        }).filter((e): e is [string, string] => typeof e[1] === "string"),
      )
    : undefined;
  destination.credentials_keys = Object.keys(creds ?? {});
  await checkWriteAccess(destination.config, creds);
  const sealed = creds ? await sealRecord(creds, context(tenant, id)) : undefined;
  await putItem("main", {
    PK: pk(tenant),
    SK: id,
    GSI1PK: listPk(tenant),
    GSI1SK: `${now}#${id}`,
    ...destination,
    ...(sealed ? { credentials_sealed: sealed } : {}),
  });
  return destination;
}

/** Writes a test object under the prefix and deletes it (when permitted; otherwise it stays). */
async function checkWriteAccess(cfg: Destination["config"], creds: Record<string, string> | undefined) {
  const client = clientFor(cfg, creds, true);
  const root = destinationRoot(cfg);
  const key = `${root ? `${root}/` : ""}.agent-platform-write-test-${randomUUID()}`;
  try {
    await client.send(
      new PutObjectCommand({ Bucket: cfg.bucket_name, Key: key, Body: "agent platform write test" }),
    );
  } catch (err) {
    const c = classifyS3Error(err);
    logger.info("destination check failed", {
      bucket: cfg.bucket_name,
      kind: c.kind,
      error: (err as Error)?.name,
    });
    throw new BadRequest(c.kind === "retryable" ? `Could not write to the bucket: ${c.message}` : c.message);
  }
  await client.send(new DeleteObjectCommand({ Bucket: cfg.bucket_name, Key: key })).catch((err) =>
    logger.info("destination test object left in place", {
      bucket: cfg.bucket_name,
      key,
      error: err?.name,
    }),
  );
  client.destroy();
}

export async function getDestination(tenant: string, id: string): Promise<Destination> {
  const item = await getItem("main", { PK: pk(tenant), SK: id });
  if (!item) throw new NotFound("Bulk export destination not found");
  return toDestination(item);
}

export async function listDestinations(tenant: string): Promise<Destination[]> {
  const out: Destination[] = [];
  let lastKey: Item | undefined;
  do {
    const page = await queryPage("main", {
      IndexName: "GSI1",
      KeyConditionExpression: "GSI1PK = :pk",
      values: { ":pk": listPk(tenant) },
      ScanIndexForward: false,
      ExclusiveStartKey: lastKey ? toItem(lastKey) : undefined,
    });
    out.push(...page.items.map(toDestination));
    lastKey = page.lastKey;
  } while (lastKey);
  return out;
}

/** A client for writing exports to a destination, with its bucket and key root. */
export async function openDestination(
  tenant: string,
  id: string,
): Promise<{ client: S3Client; bucket: string; root: string; destination: Destination }> {
  const item = await getItem("main", { PK: pk(tenant), SK: id });
  if (!item) throw new DestinationError("Bulk export destination not found");
  const destination = toDestination(item);
  const creds = item.credentials_sealed
    ? await unsealRecord(item.credentials_sealed as Sealed, context(tenant, id))
    : undefined;
  return {
    client: clientFor(destination.config, creds),
    bucket: destination.config.bucket_name,
    root: destinationRoot(destination.config),
    destination,
  };
}
