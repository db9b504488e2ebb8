import { timingSafeEqual } from "node:crypto";
import { checkedRawQuery, pathNames } from "./policy-proxy/s3-names.ts";
import { queryOf, signer } from "./policy-proxy/sigv4.ts";

// s3rver accepts any SigV4 signature ("unimplemented"); S3 does not. A presigned URL (the build step's only
// authority) is checked here as S3 checks it: recomputed by the SDK's own signer over the method, host, path and
// query it was made for, so a URL used for another key or method is refused locally as in AWS.

export interface PresignedRequest {
  method: string;
  /** Path and query as sent (still URI-encoded). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

const SIGNATURE = "X-Amz-Signature";
const CREDENTIAL = /^([^/]+)\/(\d{8})\/([a-z0-9-]+)\/s3\/aws4_request$/;
const DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** Whether a presigned request's signature is the one `secretAccessKey` makes for it (expiry is s3rver's check). */
export async function presignedMatches(req: PresignedRequest, secretAccessKey: string): Promise<boolean> {
  try {
    return await matches(req, secretAccessKey);
  } catch {
    return false; // a query that does not decode, or a name the proxy's reader refuses
  }
}

async function matches(req: PresignedRequest, secretAccessKey: string): Promise<boolean> {
  // A URL signed for a name s3rver would read as another (a `..` segment, `//`, …) holds for no object.
  pathNames(req.url.split("?")[0]!);
  checkedRawQuery(req.url);
  const query = queryOf(req.url);
  const one = (name: string) => (typeof query[name] === "string" ? (query[name] as string) : undefined);
  const cred = CREDENTIAL.exec(one("X-Amz-Credential") ?? "");
  const date = DATE.exec(one("X-Amz-Date") ?? "");
  const signature = one(SIGNATURE) ?? "";
  const expires = Number(one("X-Amz-Expires"));
  const signedHeaders = (one("X-Amz-SignedHeaders") ?? "").split(";").filter(Boolean);
  if (!cred || !date || !/^[0-9a-f]{64}$/.test(signature) || !Number.isInteger(expires)) return false;
  if (!signedHeaders.includes("host")) return false;
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const v = req.headers[name];
    if (v === undefined) return false;
    headers[name] = Array.isArray(v) ? v.join(",") : v;
  }
  const payload = one("X-Amz-Content-Sha256");
  if (payload) headers["x-amz-content-sha256"] = payload;
  delete query[SIGNATURE];
  const signingDate = new Date(
    Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!),
  );
  const signed = await signer("s3", cred[3]!, { accessKeyId: cred[1]!, secretAccessKey }).presign(
    {
      method: req.method,
      protocol: "http:",
      hostname: headers.host ?? "",
      path: req.url.split("?")[0]!,
      query,
      headers,
      body: undefined,
    },
    {
      signingDate,
      expiresIn: expires,
      signableHeaders: new Set(signedHeaders),
      unsignableHeaders: new Set(["x-amz-content-sha256"]),
      unhoistableHeaders: new Set(["x-amz-content-sha256", ...signedHeaders]),
    },
  );
  const expected = String(signed.query?.[SIGNATURE] ?? "");
  return expected.length === 64 && timingSafeEqual(Buffer.from(expected), Buffer.from(signature));
}
