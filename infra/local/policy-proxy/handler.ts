import { createHash } from "node:crypto";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { PolicyDocument } from "../../../shared/agent/runtime/policy.ts";
import { BodyTooLarge, readBody } from "../http-util.ts";
import { S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } from "../s3.ts";
import { dynamoAuthorizations, dynamoOperation } from "./dynamodb-request.ts";
import { firstDenial } from "./evaluate.ts";
import { kmsAuthorization } from "./kms-request.ts";
import { LOCAL_ACCOUNT, localTables } from "./local-tables.ts";
import { type Authorization, Refused } from "./refusal.ts";
import { accessDenied, type Service, sendRefusal } from "./responses.ts";
import { objectArn, type S3Call, s3Authorizations, s3DeleteKeys } from "./s3-request.ts";
import {
  type Credential,
  parseAuthorization,
  queryOf,
  requestTime,
  signatureMatches,
  signer,
} from "./sigv4.ts";

// The local cloud's AWS policy proxy: a runtime's DynamoDB and S3 calls (and KMS Decrypt, which opens its sealed
// environment), signed with credentials minted for it, are checked against its role's policy (the document the
// deploy step gives its role in AWS) and forwarded to DynamoDB Local, s3rver or the local KMS when allowed,
// answered as AWS answers when not.

export interface ProxyPrincipal {
  accessKeyId: string;
  secretAccessKey: string;
  /** The identity named in denials (the runtime's role ARN). */
  arn: string;
  policy: PolicyDocument;
}

export interface PolicyProxyOptions {
  principal(accessKeyId: string): ProxyPrincipal | undefined;
  upstream: { dynamodb: string; s3: string; kms?: string };
  /** The key a KMS Decrypt is authorized against (the local KMS's blobs name none): the secrets key's ARN. */
  kmsKeyArn?: string;
  region: string;
  /** The account in the local cloud's ARNs. */
  account?: string;
  /** What s3rver checks its requests' signatures with. */
  s3Credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** DynamoDB's request limit (BatchWriteItem: 16 MiB). */
const MAX_DYNAMO_BODY = 16 * 1024 * 1024;
/** A KMS Decrypt body: a ciphertext of at most 6 KiB and its context, base64 and JSON. */
const MAX_KMS_BODY = 64 * 1024;
/** A DeleteObjects body: at most 1000 keys of 1 KiB, with their XML. */
const MAX_DELETE_BODY = 2 * 1024 * 1024;

/** The request's body; past `limit`, refused as AWS refuses a body too large. */
async function readLimited(req: IncomingMessage, limit: number): Promise<Buffer> {
  try {
    return await readBody(req, limit);
  } catch (err) {
    if (err instanceof BodyTooLarge)
      throw new Refused("RequestEntityTooLarge", `The request body is larger than ${limit} bytes.`, 413);
    throw err;
  }
}

const sha256Hex = (b: Buffer) => createHash("sha256").update(b).digest("hex");

const HOP_BY_HOP = ["host", "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"];

/** The request's headers for the upstream: end-to-end ones only, less `drop`. */
function passed(req: IncomingMessage, drop: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined && !HOP_BY_HOP.includes(k) && !drop.includes(k))
      out[k] = Array.isArray(v) ? v.join(",") : v;
  return out;
}

export function createPolicyProxy(
  opts: PolicyProxyOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const account = opts.account ?? LOCAL_ACCOUNT;
  const tables = localTables(opts.region, account);
  const s3Creds = opts.s3Credentials ?? {
    accessKeyId: S3_ACCESS_KEY_ID,
    secretAccessKey: S3_SECRET_ACCESS_KEY,
  };
  const upstreamS3 = new URL(opts.upstream.s3);
  const upstreamDynamo = new URL(opts.upstream.dynamodb);
  const upstreamKms = opts.upstream.kms ? new URL(opts.upstream.kms) : undefined;

  async function authenticate(
    req: IncomingMessage,
    cred: Credential,
    payloadHash: string | undefined,
  ): Promise<ProxyPrincipal> {
    const at = requestTime(req.headers["x-amz-date"]);
    if (String(req.headers["x-amz-date"]).slice(0, 8) !== cred.date)
      throw new Refused(
        "SignatureDoesNotMatch",
        "The credential scope's date is not the request's date.",
        403,
      );
    const who = opts.principal(cred.accessKeyId);
    if (!who) throw new Refused("InvalidAccessKeyId", "Unknown access key", 403);
    const req_ = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers };
    if (!(await signatureMatches(req_, cred, who.secretAccessKey, at, payloadHash)))
      throw new Refused("SignatureDoesNotMatch", "The request signature does not match.", 403);
    return who;
  }

  function authorize(who: ProxyPrincipal, auths: Authorization[]): void {
    const denial = firstDenial(who.arn, account, who.policy, auths);
    if (denial) throw accessDenied(who.arn, denial);
  }

  async function dynamodb(req: IncomingMessage, res: ServerResponse, cred: Credential) {
    const body = await readLimited(req, MAX_DYNAMO_BODY);
    const who = await authenticate(req, cred, sha256Hex(body));
    const op = dynamoOperation(req.headers["x-amz-target"]);
    let input: unknown;
    try {
      input = JSON.parse(body.toString("utf8"));
    } catch {
      throw new Refused("SerializationException", "The request body is not valid JSON.");
    }
    authorize(who, dynamoAuthorizations(op, input, tables));
    // What was checked is what DynamoDB Local reads: a duplicate JSON key cannot mean one thing here, another there.
    const checked = Buffer.from(JSON.stringify(input));
    const headers = {
      ...passed(req, ["transfer-encoding"]),
      host: upstreamDynamo.host,
      "content-length": String(checked.length),
    };
    forward(req, res, upstreamDynamo, headers, checked);
  }

  async function s3(req: IncomingMessage, res: ServerResponse, cred: Credential) {
    const method = req.method ?? "GET";
    const declared = req.headers["x-amz-content-sha256"];
    if (typeof declared !== "string" || !(declared === "UNSIGNED-PAYLOAD" || /^[0-9a-f]{64}$/.test(declared)))
      throw new Refused(
        "InvalidArgument",
        "x-amz-content-sha256 must be UNSIGNED-PAYLOAD or the payload's SHA-256 (no streaming signatures).",
        400,
      );
    // Authenticated first, as S3 does: a caller without a valid signature learns nothing of how its call reads.
    let call: S3Call | undefined;
    let unreadable: unknown;
    try {
      call = s3Authorizations(method, req.url ?? "/", req.headers["x-amz-copy-source"]);
    } catch (err) {
      unreadable = err;
    }
    const body = call?.deleteObjects ? await readLimited(req, MAX_DELETE_BODY) : undefined;
    const who = await authenticate(req, cred, body && sha256Hex(body));
    if (!call) throw unreadable;
    const bucket = call.bucket ?? "";
    const auths = body
      ? s3DeleteKeys(body.toString("utf8")).map((key) => ({
          action: "s3:DeleteObject",
          resource: objectArn(bucket, key),
          context: {},
        }))
      : call.authorizations;
    authorize(who, auths);
    const headers = { ...passed(req, ["authorization", "x-amz-date"]), host: upstreamS3.host };
    const url = req.url ?? "/";
    const signed = await signer("s3", opts.region, s3Creds).sign({
      method,
      protocol: upstreamS3.protocol,
      hostname: upstreamS3.hostname,
      port: Number(upstreamS3.port) || undefined,
      path: url.split("?")[0],
      query: queryOf(url),
      headers,
    });
    forward(req, res, upstreamS3, signed.headers, body);
  }

  /** KMS Decrypt only: authorized as kms:Decrypt on the secrets key with the request's encryption context. */
  async function kms(req: IncomingMessage, res: ServerResponse, cred: Credential) {
    const body = await readLimited(req, MAX_KMS_BODY);
    const who = await authenticate(req, cred, sha256Hex(body));
    if (!upstreamKms || !opts.kmsKeyArn)
      throw new Refused("AccessDeniedException", "The local cloud's proxy serves no KMS here.", 403);
    const { authorization, checked: text } = kmsAuthorization(
      req.headers["x-amz-target"],
      body.toString("utf8"),
      opts.kmsKeyArn,
    );
    authorize(who, [authorization]);
    const checked = Buffer.from(text);
    const headers = {
      ...passed(req, ["transfer-encoding"]),
      host: upstreamKms.host,
      "content-length": String(checked.length),
    };
    forward(req, res, upstreamKms, headers, checked);
  }

  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    to: URL,
    headers: Record<string, string | string[] | undefined>,
    body: Buffer | undefined,
  ) {
    const up = httpRequest(
      { hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(503, { "content-type": "text/plain" }).end("upstream unavailable");
      else res.destroy();
    });
    res.on("close", () => up.destroy());
    if (body) up.end(body);
    else req.pipe(up);
  }

  return (req, res) => {
    // Which service's error shape to answer in before the signature says which service it is for.
    let service: Service = req.headers["x-amz-target"] ? "dynamodb" : "s3";
    (async () => {
      const cred = parseAuthorization(req.headers.authorization);
      if (cred.service !== "dynamodb" && cred.service !== "s3" && cred.service !== "kms")
        throw new Refused(
          "AccessDenied",
          `The local cloud's proxy serves DynamoDB, S3 and KMS Decrypt, not ${cred.service}.`,
          403,
        );
      service = cred.service;
      if (cred.region !== opts.region)
        throw new Refused(
          service === "s3" ? "AuthorizationHeaderMalformed" : "IncompleteSignature",
          `The credential scope's region must be ${opts.region}.`,
          400,
        );
      await (service === "dynamodb"
        ? dynamodb(req, res, cred)
        : service === "kms"
          ? kms(req, res, cred)
          : s3(req, res, cred));
    })().catch((err) => {
      req.resume();
      if (err instanceof Refused) return sendRefusal(res, service, err);
      sendRefusal(res, service, new Refused("InternalError", "The proxy failed to handle the request.", 500));
    });
  };
}
