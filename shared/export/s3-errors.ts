// What an S3 SDK error means for an export destination: the destination is wrong (the spec's destination
// errors and their messages), no S3 service answered, or a transient fault worth retrying.

function printable(v: unknown): string {
  try {
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

export type S3ErrorKind = "access_denied" | "bucket_invalid" | "key_id" | "endpoint" | "retryable";
/**
 * One message for both: telling "Access denied" from "Bucket is not valid" (NoSuchBucket, a 301 to another
 * region) would tell a caller whether somebody else's bucket exists, and where.
 */
const BUCKET_ACCESS =
  "Access denied or bucket is not valid: the bucket must exist (in the region given) and the credentials must be allowed to write to it";
export const DESTINATION_MESSAGES: Record<Exclude<S3ErrorKind, "retryable">, string> = {
  access_denied: BUCKET_ACCESS,
  bucket_invalid: BUCKET_ACCESS,
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
