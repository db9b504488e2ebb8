import { createHash, createHmac, type Hash, type Hmac, timingSafeEqual } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
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

/** `x-amz-date` (ISO 8601 basic, UTC) as a Date, or a refusal. */
export function requestTime(header: string | string[] | undefined, now = Date.now()): Date {
  const m = typeof header === "string" ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(header) : null;
  const at = m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw new Refused("IncompleteSignature", "The request must carry a valid X-Amz-Date header.", 400);
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

// One signer per key, service and region: it keeps the day's signing key (four HMACs) between requests.
const signers = new Map<string, { secret: string; signer: SignatureV4 }>();
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
  signers.set(id, { secret: secretAccessKey, signer: made });
  return made;
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(",") : v);

/** The query string's parameters as the signer takes them (decoded; a repeated name as a list). */
export function queryOf(url: string): Record<string, string | string[]> {
  const q = url.indexOf("?");
  const out: Record<string, string | string[]> = {};
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
  const headers: Record<string, string> = {};
  for (const name of cred.signedHeaders) {
    const v = headerValue(req.headers[name]);
    if (v === undefined) return false;
    headers[name] = v;
  }
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
