import { randomUUID } from "node:crypto";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { DeleteObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { z } from "zod";
import { getItem, type Item, putItem, queryAll } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { type Sealed, sealRecord, unsealRecord } from "../crypto/envelope.ts";
import { BadRequest, NotFound, ValidationFailed, validationError } from "../errors.ts";
import { logger } from "../log.ts";
import { endpointProblem, endpointUrlProblem, publicOnlyLookup } from "../outbound/ssrf.ts";
import { canonicalNow } from "../time.ts";
import { EXPORT_ERRORS } from "./workflow.ts";

// The SSRF guard lives in shared/outbound/ssrf.ts (one guard for every outbound URL); re-exported for callers here.
export {
  endpointProblem,
  endpointUrlProblem,
  isInternalAddress,
  publicOnlyLookup,
} from "../outbound/ssrf.ts";

// Export destinations: an S3 (or S3-compatible) bucket and prefix, with credentials sealed by KMS envelope
// encryption (write-only: only their field names are ever shown). Creation proves write access by writing a
// test object under `<root>/tmp/`, then deleting it; when the key may not delete, the object stays there.
//   record  PK T#<tenant>#BULKEXPORTDEST  SK <id>   GSI1 T#<tenant>#BULKEXPORTDESTS / <created>#<id>
const pk = (tenant: string) => `T#${tenant}#BULKEXPORTDEST`;
const listPk = (tenant: string) => `T#${tenant}#BULKEXPORTDESTS`;

/** Errors the export must not retry: the destination itself is wrong (credentials, bucket, permissions). */
export class DestinationError extends Error {
  override name = EXPORT_ERRORS.destination;
}

// — create body —

/** S3 general purpose bucket naming rules (3..63, lowercase, no IP form, no reserved prefixes/suffixes). */
export function isValidBucketName(name: string): boolean {
  return (
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) &&
    !/\.\.|\.-|-\./.test(name) &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(name) &&
    !/^(xn--|sthree-|amzn-s3-demo-)/.test(name) &&
    !/(-s3alias|--ol-s3|--x-s3|--table-s3|\.mrap)$/.test(name)
  );
}

/** "" is sent by some clients for "not set". */
const blankAsNull = (v: unknown) => (v === "" ? null : v);

export const DestinationCreate = z.looseObject({
  destination_type: z
    .string()
    .refine((t) => t === "s3" || t === "objstore", "destination_type must be s3")
    .default("s3")
    .transform((): "s3" => "s3"),
  display_name: z.string().min(1).max(255),
  config: z
    .looseObject({
      bucket_name: z.string().refine(isValidBucketName, "bucket_name is not a valid S3 bucket name"),
      prefix: z
        .string()
        .max(900)
        .nullish()
        .transform((p) => (p ?? "").replace(/^\/+|\/+$/g, "")),
      region: z.preprocess(blankAsNull, z.string().max(64).nullish()),
      endpoint_url: z.preprocess(blankAsNull, z.string().max(2048).nullish()),
      include_bucket_in_prefix: z
        .boolean()
        .nullish()
        .transform((b) => b ?? false),
    })
    .superRefine((c, ctx) => {
      if (c.endpoint_url) {
        const problem = endpointUrlProblem(c.endpoint_url, config.localMode);
        if (problem) ctx.addIssue({ code: "custom", path: ["endpoint_url"], message: problem });
      }
      // Without an endpoint the region becomes part of the S3 host name: one DNS label. S3-compatible
      // services only sign with it, and some use names such as "auto" or "RegionOne".
      if (c.region && !(c.endpoint_url ? /^[A-Za-z0-9._-]+$/ : /^[a-z0-9]+(-[a-z0-9]+)*$/).test(c.region))
        ctx.addIssue({ code: "custom", path: ["region"], message: "region is not a valid region name" });
    }),
  credentials: z
    .looseObject({
      access_key_id: z.string().min(1).max(256),
      secret_access_key: z.string().min(1).max(1024),
      session_token: z.preprocess(blankAsNull, z.string().max(8192).nullish()),
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

// — S3 errors —

function printable(v: unknown): string {
  try {
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

export type S3ErrorKind = "access_denied" | "bucket_invalid" | "key_id" | "endpoint" | "retryable";
export const DESTINATION_MESSAGES: Record<Exclude<S3ErrorKind, "retryable">, string> = {
  access_denied: "Access denied",
  bucket_invalid: "Bucket is not valid",
  key_id: "Key ID you provided does not exist",
  endpoint: "Invalid endpoint",
};

const ACCESS_DENIED = new Set([
  "AccessDenied",
  "SignatureDoesNotMatch",
  "InvalidToken",
  "ExpiredToken",
  "TokenRefreshRequired",
  "AllAccessDisabled",
  "AccountProblem",
  "InvalidSecurity",
  "InvalidClientTokenId",
  // The SDK found no credentials (no keys given and none in the environment).
  "CredentialsProviderError",
]);
const BUCKET_INVALID = new Set([
  "NoSuchBucket",
  "InvalidBucketName",
  "PermanentRedirect",
  "AuthorizationHeaderMalformed", // signed for another region than the bucket's
  "IllegalLocationConstraintException",
  "InvalidBucketState",
]);
const RETRYABLE = new Set([
  "SlowDown",
  "Throttling",
  "ThrottlingException",
  "RequestThrottled",
  "RequestTimeout",
  "RequestTimeTooSkewed",
  "InternalError",
  "ServiceUnavailable",
  "OperationAborted",
  "NoSuchUpload",
  "TimeoutError",
  "RequestTimeoutException",
  "AbortError",
]);
// No answer from an S3 service: refused, unknown host, unreachable, TLS problems, the SSRF guard.
const ENDPOINT_NET = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_FAIL",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPROTO",
  "EINTERNALADDRESS",
  "ERR_INVALID_URL",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);
// Transient network faults.
const RETRYABLE_NET = new Set([
  "ETIMEDOUT",
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "EAI_AGAIN",
  "ESOCKETTIMEDOUT",
]);
// Names the SDK gives errors whose body carried no S3 error code (a HEAD, or a response that is not S3's).
const GENERIC_NAMES = new Set([
  "",
  "Error",
  "Unknown",
  "UnknownError",
  "NotFound",
  "Forbidden",
  "BadRequest",
]);

/**
 * What an S3 SDK error means for a destination: one of the spec's four destination errors (`access_denied`,
 * `bucket_invalid`, `key_id`: the destination is wrong, retrying cannot help; `endpoint`: no S3 service
 * answered there), or `retryable` (throttling, 5xx, timeouts, resets). Never throws.
 */
export function classifyS3Error(err: unknown): { kind: S3ErrorKind; message: string } {
  const e = (err && typeof err === "object" ? err : {}) as {
    name?: unknown;
    message?: unknown;
    Code?: unknown;
    code?: unknown;
    cause?: { code?: unknown };
    $metadata?: { httpStatusCode?: number; requestId?: string; extendedRequestId?: string };
  };
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const name = str(e.name);
  const s3Code = str(e.Code) || (GENERIC_NAMES.has(name) ? "" : name);
  const netCode = str(e.code) || str(e.cause?.code);
  const status = typeof e.$metadata?.httpStatusCode === "number" ? e.$metadata.httpStatusCode : undefined;
  // An S3 service answered: its error carried a code, or the response had an S3 request id.
  const fromS3 = status !== undefined && (s3Code !== "" || !!e.$metadata?.requestId);
  const kind = ((): S3ErrorKind => {
    for (const code of [s3Code, netCode]) {
      if (code === "InvalidAccessKeyId") return "key_id";
      if (ACCESS_DENIED.has(code)) return "access_denied";
      if (BUCKET_INVALID.has(code)) return "bucket_invalid";
      if (RETRYABLE.has(code) || RETRYABLE_NET.has(code)) return "retryable";
      if (ENDPOINT_NET.has(code) || code.startsWith("ERR_SSL_")) return "endpoint";
    }
    if (status === 403) return "access_denied";
    if (status === 301) return "bucket_invalid";
    if (status === 404) return fromS3 ? "bucket_invalid" : "endpoint";
    if (status !== undefined && (status >= 500 || status === 429 || status === 408))
      return s3Code === "NotImplemented" ? "endpoint" : "retryable";
    if (status !== undefined && fromS3) return "retryable"; // another S3 4xx: let the retries record it
    return "endpoint"; // no answer, or an answer that is not S3's
  })();
  const detail = `${s3Code || netCode || name || "Error"}: ${str(e.message) || printable(err)}`.slice(0, 500);
  return { kind, message: kind === "retryable" ? detail : DESTINATION_MESSAGES[kind] };
}

// — clients and keys —

/** The key prefix exports write under: the prefix, led by the bucket name when include_bucket_in_prefix. */
export function destinationRoot(cfg: Destination["config"]): string {
  return [cfg.include_bucket_in_prefix ? cfg.bucket_name : "", cfg.prefix].filter(Boolean).join("/");
}

/** Where the creation write test puts its object (under `tmp/`, where it stays when deleting is not allowed). */
export function writeTestKey(cfg: Destination["config"], id: string = randomUUID()): string {
  const root = destinationRoot(cfg);
  return `${root ? `${root}/` : ""}tmp/.agent-platform-write-test-${id}`;
}

type Credentials = Record<string, string>;

function clientFor(cfg: Destination["config"], creds: Credentials | undefined, purpose: "check" | "export") {
  const check = purpose === "check";
  // Outside local mode, sockets to a custom endpoint refuse host names resolving to internal addresses.
  const agents =
    cfg.endpoint_url && !config.localMode
      ? {
          httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 50, lookup: publicOnlyLookup }),
          httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 50, lookup: publicOnlyLookup }),
        }
      : {};
  return new S3Client({
    region: cfg.region ?? config.region,
    ...(cfg.endpoint_url
      ? { endpoint: cfg.endpoint_url, forcePathStyle: true }
      : { followRegionRedirects: !cfg.region }),
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
    // Creation fails fast on a dead endpoint (short timeouts, one retry). An export's writes are not retried
    // by the SDK: a failed write is retried by the state machine (30 s fixed) and recorded on the run as
    // retry_<n>, as the spec describes. requestTimeout is an idle-socket timeout, so it does not cap uploads.
    maxAttempts: check ? 2 : 1,
    requestHandler: {
      connectionTimeout: check ? 5_000 : 30_000,
      requestTimeout: check ? 10_000 : 300_000,
      throwOnRequestTimeout: true,
      ...agents,
    },
  });
}

const sealContext = (tenant: string, id: string) => ({
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
    if (problem) throw validationError(["body", "config", "endpoint_url"], problem);
  }
  const creds: Credentials | undefined = body.credentials
    ? {
        access_key_id: body.credentials.access_key_id,
        secret_access_key: body.credentials.secret_access_key,
        ...(body.credentials.session_token ? { session_token: body.credentials.session_token } : {}),
      }
    : undefined;
  // Without credentials the platform's own role would write: never into the platform's bucket (run payloads).
  if (!creds && body.config.bucket_name === config.defaultBucket)
    throw new ValidationFailed([
      {
        loc: ["body", "credentials"],
        msg: "The platform's own bucket can only be used with explicit credentials",
        type: "missing",
      },
    ]);
  const id = randomUUID();
  const now = canonicalNow();
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
      include_bucket_in_prefix: body.config.include_bucket_in_prefix,
    },
    created_at: now,
    updated_at: now,
    credentials_keys: Object.keys(creds ?? {}),
  };
  await checkWriteAccess(tenant, destination.config, creds);
  const sealed = creds ? await sealRecord(creds, sealContext(tenant, id)) : undefined;
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

/** The 400 a failed write test answers with: the spec's message, or what went wrong for a transient fault. */
export function writeTestFailure(err: unknown): BadRequest {
  const c = classifyS3Error(err);
  if (c.kind !== "retryable") return new BadRequest(c.message);
  const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  // No answer in time (timeouts, resets): the endpoint is not usable as it stands.
  if (status === undefined) return new BadRequest(DESTINATION_MESSAGES.endpoint);
  return new BadRequest(`Could not write the test object (HTTP ${status}, ${c.message}); try again`);
}

/**
 * Writes a test object and deletes it. Deleting is optional on the key: when it fails (AccessDenied or
 * anything else) the object stays under `<root>/tmp/`, and creation still succeeds.
 */
async function checkWriteAccess(tenant: string, cfg: Destination["config"], creds: Credentials | undefined) {
  const client = clientFor(cfg, creds, "check");
  const key = writeTestKey(cfg);
  try {
    let etag: string | undefined;
    try {
      const out = await client.send(
        new PutObjectCommand({
          Bucket: cfg.bucket_name,
          Key: key,
          Body: "agent platform destination write test\n",
          ContentType: "text/plain",
        }),
      );
      etag = out.ETag;
    } catch (err) {
      const failure = writeTestFailure(err);
      logger.info("destination write test failed", {
        tenant_id: tenant,
        bucket: cfg.bucket_name,
        detail: failure.message,
        error: (err as Error)?.name,
        status: (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode,
      });
      throw failure;
    }
    // Every S3 PutObject answer carries an ETag; a 200 without one came from something else.
    if (!etag) {
      logger.info("destination write test: answer without ETag", {
        tenant_id: tenant,
        bucket: cfg.bucket_name,
      });
      throw new BadRequest(DESTINATION_MESSAGES.endpoint);
    }
    await client.send(new DeleteObjectCommand({ Bucket: cfg.bucket_name, Key: key })).catch((err) =>
      logger.info("destination write test object left in place", {
        tenant_id: tenant,
        bucket: cfg.bucket_name,
        key,
        error: (err as Error)?.name,
      }),
    );
  } finally {
    client.destroy();
  }
}

/** The destination in its wire shape; NotFound for an unknown id or another workspace's. */
export async function getDestination(tenant: string, id: string): Promise<Destination> {
  const item = await getItem("main", { PK: pk(tenant), SK: id });
  if (!item) throw new NotFound("Bulk export destination not found");
  return toDestination(item);
}

/** The workspace's destinations, newest first. */
export async function listDestinations(tenant: string): Promise<Destination[]> {
  const items = await queryAll("main", {
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk",
    values: { ":pk": listPk(tenant) },
    ScanIndexForward: false,
  });
  return items.map(toDestination);
}

/**
 * A client for writing exports to a destination (credentials unsealed), its bucket and key root: "" or a
 * path without leading/trailing slash, led by the bucket name when include_bucket_in_prefix.
 * A missing destination is a DestinationError (not retried).
 */
export async function openDestination(
  tenant: string,
  id: string,
): Promise<{ client: S3Client; bucket: string; root: string; destination: Destination }> {
  const item = await getItem("main", { PK: pk(tenant), SK: id });
  if (!item) throw new DestinationError("Bulk export destination not found");
  const destination = toDestination(item);
  const creds = item.credentials_sealed
    ? await unsealRecord(item.credentials_sealed as Sealed, sealContext(tenant, id))
    : undefined;
  return {
    client: clientFor(destination.config, creds, "export"),
    bucket: destination.config.bucket_name,
    root: destinationRoot(destination.config),
    destination,
  };
}
