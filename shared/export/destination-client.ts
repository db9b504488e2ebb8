import { randomUUID } from "node:crypto";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { pipeline, Transform } from "node:stream";
import { DeleteObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { config } from "../config.ts";
import { publicOnlyLookup } from "../containment/ssrf.ts";
import { BadRequest, DestinationError } from "../errors.ts";
import { logger } from "../log.ts";
import { destinationPort, notOwnLookup } from "./destination-guard.ts";
import type { Destination } from "./destination-schemas.ts";
import { classifyS3Error, DESTINATION_MESSAGES } from "./s3-errors.ts";

// Talking to a destination's bucket: the key root exports write under, an S3 client for the destination
// (for the creation check, or for an export's writes), and the creation check itself, which proves write
// access by writing a test object under `<root>/tmp/`, then deleting it; when the key may not delete, the
// object stays there.

/** The key prefix exports write under: the prefix, led by the bucket name when include_bucket_in_prefix. */
export function destinationRoot(cfg: Destination["config"]): string {
  return [cfg.include_bucket_in_prefix ? cfg.bucket_name : "", cfg.prefix].filter(Boolean).join("/");
}

/** Where the creation write test puts its object (under `tmp/`, where it stays when deleting is not allowed). */
export function writeTestKey(cfg: Destination["config"], id: string = randomUUID()): string {
  const root = destinationRoot(cfg);
  return `${root ? `${root}/` : ""}tmp/.agent-platform-write-test-${id}`;
}

/** A destination's credentials, unsealed: access_key_id, secret_access_key, and session_token when given. */
export type Credentials = Record<string, string>;

/** Why a destination without credentials is refused (creation answers it as a 422, an export run records it). */
export const NO_CREDENTIALS =
  "credentials are required: an export writes only with the workspace's own keys (access_key_id, secret_access_key), never with the platform's";

/** An S3 client for a destination: "check" for the creation write test (fails fast), "export" for its writes. */
export function destinationClient(
  cfg: Destination["config"],
  creds: Credentials | undefined,
  purpose: "check" | "export",
) {
  // The backstop of the rule createDestination states: without a workspace's own credentials nothing is sent.
  if (!creds && !config.export.environmentCredentials) throw new DestinationError(NO_CREDENTIALS);
  const check = purpose === "check";
  // Sockets to a custom endpoint refuse host names resolving to internal addresses; locally (loopback allowed),
  // those resolving to one of the platform's own services.
  const lookup = cfg.endpoint_url
    ? config.localMode
      ? notOwnLookup(destinationPort(cfg.endpoint_url))
      : publicOnlyLookup
    : undefined;
  const agents = lookup
    ? {
        httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 50, lookup }),
        httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 50, lookup }),
      }
    : {};
  const client = new S3Client({
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
  capAnswers(client);
  return client;
}

/**
 * The most bytes of one answer a destination's client reads. Every call an export makes (PutObject, the multipart
 * calls, HeadObject, DeleteObject) is answered with at most a short XML document; the SDK reads an answer's body
 * whole into memory, so without a bound a hostile endpoint's endless answer to the creation write test grew the
 * platform process by gigabytes (secreview5).
 */
export const MAX_ANSWER_BYTES = 1 << 20;

/** Every answer's body of `client` passes through a counter that fails the call past MAX_ANSWER_BYTES. */
function capAnswers(client: S3Client): void {
  type Answer = { response: { body?: unknown } };
  const cap = (next: (args: unknown) => Promise<Answer>) => async (args: unknown) => {
    const out = await next(args);
    const response = out.response;
    if (response.body && typeof (response.body as NodeJS.ReadableStream).pipe === "function") {
      let read = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES)
            return done(new Error(`the endpoint's answer is longer than ${MAX_ANSWER_BYTES} bytes`));
          done(null, chunk);
        },
      });
      // pipeline destroys the answer's socket when the counter fails.
      pipeline(response.body as NodeJS.ReadableStream, counter, () => {});
      response.body = counter;
    }
    return out;
  };
  (client.middlewareStack as { addRelativeTo(m: unknown, o: unknown): void }).addRelativeTo(cap, {
    relation: "after",
    toMiddleware: "deserializerMiddleware",
    name: "destinationAnswerCap",
    override: true,
  });
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
 * How long the write test (both of its calls, with their retry) may take: the idle-socket timeouts do not end an
 * answer that trickles a byte every few seconds, which held the creation until the API's own timeout (a 500 after
 * 29 s, secreview5); past this the endpoint is answered as not usable (400).
 */
export const CHECK_DEADLINE_MS = 20_000;

/**
 * Writes a test object and deletes it. Deleting is optional on the key: when it fails (AccessDenied or
 * anything else) the object stays under `<root>/tmp/`, and creation still succeeds.
 */
export async function checkWriteAccess(
  tenant: string,
  cfg: Destination["config"],
  creds: Credentials | undefined,
) {
  const client = destinationClient(cfg, creds, "check");
  const key = writeTestKey(cfg);
  const abortSignal = AbortSignal.timeout(CHECK_DEADLINE_MS);
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
        { abortSignal },
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
    await client
      .send(new DeleteObjectCommand({ Bucket: cfg.bucket_name, Key: key }), { abortSignal })
      .catch((err) =>
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
