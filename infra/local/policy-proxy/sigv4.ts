import { createHash, createHmac, type Hash, type Hmac, timingSafeEqual } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import { dict } from "../../../shared/dict.ts";
import { Refused } from "./refusal.ts";

// SigV4 verification: the signature is recomputed by the SDK's own signer over the headers the client signed and
// compared in constant time, so the proxy does no signing math of its own.

/** How far a request's time may be from the proxy's, as AWS allows. */
export const MAX_SKEW_MS = 5 * 60 * 1000;

export interface SignedRequest {
  method: string;
  /** Path and query as sent (still URI-encoded). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface Credential {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

const AUTH =
  /^AWS4-HMAC-SHA256 +Credential=([^/,\s]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request *, *SignedHeaders=([a-z0-9;_.-]+) *, *Signature=([0-9a-f]{64})$/;

/** The Authorization header's parts, or a refusal saying what is wrong with it. */
export function parseAuthorization(header: string | string[] | undefined): Credential {
  if (header === undefined)
    throw new Refused("MissingAuthenticationToken", "Request is missing Authentication Token", 403);
  const m = typeof header === "string" ? AUTH.exec(header.trim()) : null;
  if (!m)
    throw new Refused("IncompleteSignature", "The request signature does not conform to AWS standards.", 400);
  return {
    accessKeyId: m[1],
    date: m[2],
    region: m[3],
    service: m[4],
    signedHeaders: m[5].split(";"),
    signature: m[6],
  };
}

/** A presigned URL's credential (query-string authentication, S3's presigned GET and PUT). */
export interface PresignedCredential extends Credential {
  /** X-Amz-Date as sent. */
  amzDate: string;
  expiresSeconds: number;
}

/** The query parameters of query-string authentication (and the payload hash hoisted beside them); the upstream request drops them. */
export const PRESIGN_PARAMS = [
  "X-Amz-Algorithm",
  "X-Amz-Credential",
  "X-Amz-Date",
  "X-Amz-Expires",
  "X-Amz-SignedHeaders",
  "X-Amz-Signature",
  "X-Amz-Security-Token",
  "X-Amz-Content-Sha256",
];

const CONTENT_SHA256 = "X-Amz-Content-Sha256";

/** The URL without its query-string authentication (the other parameters as sent). */
export function withoutPresignParams(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const kept = url
    .slice(q + 1)
    .split("&")
    .filter((part) => part && !PRESIGN_PARAMS.includes(decode(part.split("=")[0])));
  return kept.length ? `${url.slice(0, q)}?${kept.join("&")}` : url.slice(0, q);
}

/** A presigned URL's credential from its query, or undefined when it carries none (header authentication). */
export function presignedCredential(url: string): PresignedCredential | undefined {
  const q = queryOf(url);
  if (q["X-Amz-Algorithm"] === undefined) return undefined;
  const one = (name: string) => (typeof q[name] === "string" ? (q[name] as string) : undefined);
  const cred = /^([^/\s]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request$/.exec(
    one("X-Amz-Credential") ?? "",
  );
  const signedHeaders = one("X-Amz-SignedHeaders");
  const signature = one("X-Amz-Signature");
  const expires = Number(one("X-Amz-Expires"));
  if (
    one("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256" ||
    !cred ||
    !signedHeaders ||
    !/^[a-z0-9;_.-]+$/.test(signedHeaders) ||
    !signature ||
    !/^[0-9a-f]{64}$/.test(signature) ||
    !Number.isInteger(expires) ||
    expires < 1 ||
    expires > 604_800
  )
    throw new Refused(
      "AuthorizationQueryParametersError",
      "The presigned URL's parameters are malformed.",
      400,
    );
  return {
    accessKeyId: cred[1],
    date: cred[2],
    region: cred[3],
    service: cred[4],
    signedHeaders: signedHeaders.split(";"),
    signature,
    amzDate: one("X-Amz-Date") ?? "",
    expiresSeconds: expires,
  };
}

/** `x-amz-date` (ISO 8601 basic, UTC) as a Date, or a refusal. */
export function requestTime(header: string | string[] | undefined, now = Date.now()): Date {
  const at = amzTime(header);
  if (!at) throw new Refused("IncompleteSignature", "The request must carry a valid X-Amz-Date header.", 400);
  if (Math.abs(at.getTime() - now) > MAX_SKEW_MS)
    throw new Refused(
      "RequestTimeTooSkewed",
      "Signature expired: the request time is more than 5 minutes from the server's.",
      403,
    );
  return at;
}

// node:crypto in the shape the signer takes (what @smithy/hash-node does).
type Data = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: Data) =>
  typeof d === "string"
    ? d
    : ArrayBuffer.isView(d)
      ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength)
      : new Uint8Array(d);
class Sha256 {
  private h: Hash | Hmac;
  private secret?: string | Uint8Array;
  constructor(secret?: Data) {
    this.secret = secret === undefined ? undefined : bytes(secret);
    this.h = this.secret === undefined ? createHash("sha256") : createHmac("sha256", this.secret);
  }
  update(data: Data) {
    this.h.update(bytes(data));
  }
  async digest() {
    return new Uint8Array(this.h.digest());
  }
  reset() {
    this.h = this.secret === undefined ? createHash("sha256") : createHmac("sha256", this.secret);
  }
}

export function signer(
  service: string,
  region: string,
  credentials: { accessKeyId: string; secretAccessKey: string },
) {
  // S3 signs the path as sent; other services URI-encode it once more. Nothing is added to what was signed.
  return new SignatureV4({
    service,
    region,
    credentials,
    sha256: Sha256,
    uriEscapePath: service !== "s3",
    applyChecksum: false,
  });
}

// One signer per key, service and region, holding its credential's signing keys: each day's (four HMACs of the
// secret) is derived once, the first time a request of that day is checked, not per request.
const signers = new Map<string, { secret: string; signer: SignatureV4 }>();
/** Signing keys kept per signer: a presigned URL may be signed up to 7 days back, so a few days' worth. */
const DAYS_KEPT = 8;
let derivations = 0;
/** How many signing keys the proxy has derived (a credential's day derives one: the tests count them). */
export const signingKeyDerivations = () => derivations;

async function deriveSigningKey(secret: string, shortDate: string, region: string, service: string) {
  derivations++;
  let key: Buffer = createHmac("sha256", `AWS4${secret}`).update(shortDate).digest();
  for (const part of [region, service, "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
  return new Uint8Array(key);
}

function signerFor(
  service: string,
  region: string,
  accessKeyId: string,
  secretAccessKey: string,
): SignatureV4 {
  const id = `${accessKeyId}/${service}/${region}`;
  const known = signers.get(id);
  if (known?.secret === secretAccessKey) return known.signer;
  if (signers.size >= 1024) signers.clear();
  const made = signer(service, region, { accessKeyId, secretAccessKey });
  // The SDK's signer derives through a process-wide memory of 50 keys, shared with every client of this process
  // and keyed by an HMAC of the secret per call; this one keeps its own credential's keys by day.
  const days = new Map<string, Promise<Uint8Array>>();
  (made as unknown as { getSigningKey: unknown }).getSigningKey = (
    _credentials: unknown,
    keyRegion: string,
    shortDate: string,
    keyService?: string,
  ) => {
    const day = `${shortDate}/${keyRegion}/${keyService ?? service}`;
    let key = days.get(day);
    if (!key) {
      if (days.size >= DAYS_KEPT) days.clear();
      key = deriveSigningKey(secretAccessKey, shortDate, keyRegion, keyService ?? service);
      days.set(day, key);
    }
    return key;
  };
  signers.set(id, { secret: secretAccessKey, signer: made });
  return made;
}

function amzTime(v: string | string[] | undefined): Date | undefined {
  const m = typeof v === "string" ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v) : null;
  const at = m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
}

/** A presigned URL's signing time, refused when it is not yet valid or has expired (as S3 answers). */
export function presignedTime(cred: PresignedCredential, now = Date.now()): Date {
  const at = amzTime(cred.amzDate);
  if (!at || cred.amzDate.slice(0, 8) !== cred.date)
    throw new Refused("AuthorizationQueryParametersError", "X-Amz-Date must be the credential's date.", 400);
  if (at.getTime() - now > MAX_SKEW_MS) throw new Refused("AccessDenied", "Request is not valid yet", 403);
  if (now > at.getTime() + cred.expiresSeconds * 1000)
    throw new Refused("AccessDenied", "Request has expired", 403);
  return at;
}

/** The values of the headers the credential says were signed, or undefined when one is missing. */
function signedHeaderValues(req: SignedRequest, cred: Credential): Record<string, string> | undefined {
  const headers: Record<string, string> = {};
  for (const name of cred.signedHeaders) {
    const v = headerValue(req.headers[name]);
    if (v === undefined) return undefined;
    headers[name] = v;
  }
  return headers;
}

/** Is the presigned URL's signature the one `secret` makes (S3: the payload is unsigned)? */
export async function presignatureMatches(
  req: SignedRequest,
  cred: PresignedCredential,
  secretAccessKey: string,
  signingDate: Date,
): Promise<boolean> {
  const headers = signedHeaderValues(req, cred);
  if (!headers) return false;
  if (!cred.signedHeaders.includes("host")) return false;
  const query = queryOf(req.url);
  // S3's presigned URLs leave the payload unsigned: the signer reads that from this header, and hoists it back
  // into the query when the URL carried it there (as the SDK's presigner does).
  const hoisted = query[CONTENT_SHA256];
  for (const name of PRESIGN_PARAMS) delete query[name];
  headers[CONTENT_SHA256] = typeof hoisted === "string" ? hoisted : "UNSIGNED-PAYLOAD";
  const signed = await signerFor(cred.service, cred.region, cred.accessKeyId, secretAccessKey).presign(
    {
      method: req.method,
      protocol: "http:",
      hostname: headers.host,
      path: req.url.split("?")[0],
      query,
      headers,
      body: undefined,
    },
    {
      signingDate,
      expiresIn: cred.expiresSeconds,
      signableHeaders: new Set(cred.signedHeaders),
      unsignableHeaders: new Set([CONTENT_SHA256]),
      unhoistableHeaders: new Set([
        ...cred.signedHeaders,
        ...(typeof hoisted === "string" ? [] : [CONTENT_SHA256]),
      ]),
    },
  );
  const expected = String(signed.query?.["X-Amz-Signature"] ?? "");
  return expected.length === 64 && timingSafeEqual(Buffer.from(expected), Buffer.from(cred.signature));
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(",") : v);

/** The query string's parameters as the signer takes them (decoded; a repeated name as a list). */
export function queryOf(url: string): Record<string, string | string[]> {
  const q = url.indexOf("?");
  const out = dict<string | string[]>();
  if (q < 0) return out;
  for (const part of url.slice(q + 1).split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const [k, v] = eq < 0 ? [part, ""] : [part.slice(0, eq), part.slice(eq + 1)];
    const key = decode(k);
    const value = decode(v);
    const prev = out[key];
    out[key] = prev === undefined ? value : [...[prev].flat(), value];
  }
  return out;
}

export function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new Refused("InvalidURI", "Couldn't parse the specified URI.", 400);
  }
}

/**
 * Is `signature` the one `secret` makes for this request? `payloadHash` is the hex SHA-256 of the body when the
 * proxy holds it; otherwise the request must say its payload hash in a signed x-amz-content-sha256.
 */
export async function signatureMatches(
  req: SignedRequest,
  cred: Credential,
  secretAccessKey: string,
  signingDate: Date,
  payloadHash: string | undefined,
): Promise<boolean> {
  const headers = signedHeaderValues(req, cred);
  if (!headers) return false;
  if (!cred.signedHeaders.includes("host") || !cred.signedHeaders.includes("x-amz-date")) return false;
  const declared = headers["x-amz-content-sha256"];
  if (declared === undefined && payloadHash === undefined) return false;
  if (
    declared !== undefined &&
    payloadHash !== undefined &&
    declared !== "UNSIGNED-PAYLOAD" &&
    declared !== payloadHash
  )
    return false;
  if (declared === undefined && payloadHash !== undefined) headers["x-amz-content-sha256"] = payloadHash;
  const path = req.url.split("?")[0];
  const signed = await signerFor(cred.service, cred.region, cred.accessKeyId, secretAccessKey).sign(
    {
      method: req.method,
      protocol: "http:",
      hostname: headers.host,
      path,
      query: queryOf(req.url),
      headers,
      body: undefined,
    },
    {
      signingDate,
      signableHeaders: new Set(cred.signedHeaders),
      unsignableHeaders: new Set(["x-amz-content-sha256"].filter((h) => !cred.signedHeaders.includes(h))),
    },
  );
  const expected = /Signature=([0-9a-f]{64})$/.exec(String(signed.headers.authorization))?.[1] ?? "";
  return expected.length === 64 && timingSafeEqual(Buffer.from(expected), Buffer.from(cred.signature));
}
