import { createHash } from "node:crypto";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { PolicyDocument } from "../../../shared/containment/runtime-policy.ts";
import { BACKEND_TOKEN_HEADER, type Backend, CALLER_HEADER } from "../backend-token.ts";
import { BodyTooLarge, readBody } from "../http-util.ts";
import { S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } from "../s3.ts";
import { chargeDynamoWrite, chargeS3Write } from "./budget-charges.ts";
import { dynamoAuthorizations, dynamoOperation } from "./dynamodb-request.ts";
import { type EvaluatorOptions, type PolicyEvaluator, policyEvaluator } from "./evaluate.ts";
import { LOCAL_ACCOUNT, localTables } from "./local-tables.ts";
import { type Authorization, Refused } from "./refusal.ts";
import { accessDenied, type Service, sendRefusal } from "./responses.ts";
import { objectArn, type S3Call, s3Authorizations, s3DeleteObjects } from "./s3-request.ts";
import {
  EMULATED_SERVICES,
  type EmulatedService,
  emulatedServiceOf,
  type ServiceArns,
  serviceAuthorizations,
} from "./service-request.ts";
import {
  type Credential,
  type PresignedCredential,
  parseAuthorization,
  presignatureMatches,
  presignedCredential,
  presignedTime,
  queryOf,
  requestTime,
  signatureMatches,
  signer,
  withoutPresignParams,
} from "./sigv4.ts";
import type { BudgetScope, StorageBudget } from "./storage-budget.ts";

// The local cloud's AWS policy proxy: a caller's AWS calls, signed with credentials minted for its role (a
// runtime's, a platform function's), are checked against that role's policy (the document its role has in AWS)
// and forwarded to DynamoDB Local, s3rver or the emulator of KMS, Step Functions, Lambda and Scheduler when
// allowed (with the backend's token: they answer nothing else), answered as AWS answers when not.

export interface ProxyPrincipal {
  accessKeyId: string;
  secretAccessKey: string;
  /** The identity named in denials (the runtime's role ARN). */
  arn: string;
  policy: PolicyDocument;
  /** Its role's permissions boundary: a call must be allowed by both. */
  boundary?: PolicyDocument;
  /** A runtime's deployment: its writes count against that deployment's storage budget (`storage`). */
  deployment?: BudgetScope;
}

export interface PolicyProxyOptions {
  principal(accessKeyId: string): ProxyPrincipal | undefined;
  upstream: {
    dynamodb: Backend;
    s3: Backend;
    /** KMS, Step Functions, Lambda and Scheduler (aws-emulator.ts). */
    emulator?: Backend;
  };
  /** How KMS names resolve to keys (needed with `upstream.emulator`). */
  kms?: Pick<ServiceArns, "kmsKey" | "kmsKeyOfCiphertext">;
  /** The local IAM's roles, which IAM calls are checked against (their ARN with its path, their boundary). */
  iamRole?: ServiceArns["iamRole"];
  region: string;
  /** The account in the local cloud's ARNs. */
  account?: string;
  /** What s3rver checks its requests' signatures with. */
  s3Credentials?: { accessKeyId: string; secretAccessKey: string };
  /** The deployments' storage budgets, which a runtime principal's writes are charged to before they are forwarded. */
  storage?: StorageBudget;
  /** How policies are evaluated (compiled matchers and a decision memory unless told otherwise: the bench). */
  evaluation?: EvaluatorOptions;
}

/** DynamoDB's request limit (BatchWriteItem: 16 MiB). */
const MAX_DYNAMO_BODY = 16 * 1024 * 1024;
/** Lambda's synchronous invocation payload limit (6 MB); the other emulated services' requests are smaller. */
const MAX_EMULATED_BODY = 6 * 1024 * 1024;
/** A DeleteObjects body: at most 1000 keys of 1 KiB, with their XML. */
const MAX_DELETE_BODY = 2 * 1024 * 1024;

/**
 * What a request's line and headers say, read once (the budget's bufferedBodyBytes and the handler both ask):
 * its credential (the Authorization header's or a presigned URL's) or why it has none, and the S3 call its
 * method and URL name.
 */
interface RequestHead {
  cred?: Credential | PresignedCredential;
  /** Why it has no usable credential (a Refused: what the handler answers). */
  credError?: unknown;
  /** The URL without its query-string authentication (presigned), else as sent. */
  target: string;
  s3?: { call?: S3Call; error?: unknown };
}
const heads = new WeakMap<IncomingMessage, RequestHead>();

function headOf(req: IncomingMessage): RequestHead {
  let head = heads.get(req);
  if (!head) {
    const url = req.url ?? "/";
    head = { target: url };
    try {
      const presigned = req.headers.authorization === undefined ? presignedCredential(url) : undefined;
      if (presigned) head.target = withoutPresignParams(url);
      head.cred = presigned ?? parseAuthorization(req.headers.authorization);
    } catch (err) {
      head.credError = err;
    }
    heads.set(req, head);
  }
  return head;
}

/** The S3 call the request names (read once), or what is wrong with it. */
function s3CallOf(req: IncomingMessage): NonNullable<RequestHead["s3"]> {
  const head = headOf(req);
  if (!head.s3) {
    try {
      head.s3 = {
        call: s3Authorizations(req.method ?? "GET", head.target, req.headers["x-amz-copy-source"]),
      };
    } catch (error) {
      head.s3 = { error };
    }
  }
  return head.s3;
}

/**
 * The most of a request's body this proxy holds in memory before it answers (an S3 object body streams instead):
 * what a budget of a caller's requests must count. Read as the proxy reads the call — by the Authorization's
 * service, whatever X-Amz-Target says, and by the S3 call — before a byte of the body; 0 for what it refuses unread.
 */
export function bufferedBodyBytes(req: IncomingMessage): number {
  const { cred } = headOf(req);
  if (!cred) return 0;
  if (cred.service === "dynamodb") return MAX_DYNAMO_BODY;
  if (EMULATED_SERVICES.some((s) => s === cred.service)) return MAX_EMULATED_BODY;
  if (cred.service !== "s3") return 0;
  return s3CallOf(req).call?.deleteObjects ? MAX_DELETE_BODY : 0;
}

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

/** A JSON protocol's request body; one that does not parse is refused as the services refuse it. */
function jsonOf(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw new Refused("SerializationException", "The request body is not valid JSON.");
  }
}

/** An IAM call's form-encoded members, each named once (IAM reads one value of each; which one is not ours to guess). */
function iamMembers(body: Buffer): Record<string, string> {
  const members = [...new URLSearchParams(body.toString("utf8"))];
  const names = new Set<string>();
  for (const [k] of members) {
    if (names.has(k))
      throw new Refused("InvalidParameterCombination", `The member ${k} is given more than once.`);
    names.add(k);
  }
  return Object.fromEntries(members);
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

/** The service an unsigned request (or one whose signature does not parse) looks meant for: by its target or path. */
function unsignedService(req: IncomingMessage): Service {
  const target = String(req.headers["x-amz-target"] ?? "");
  if (target.startsWith("TrentService.")) return "kms";
  if (target.startsWith("AWSStepFunctions.")) return "states";
  if (target.startsWith("Logs_20140328.")) return "logs";
  if (target.startsWith("CodeBuild_20161006.")) return "codebuild";
  if (target) return "dynamodb";
  const path = req.url ?? "/";
  if (/^\/20(15-03-31|17-10-31|19-09-25|19-09-30|21-11-15)\/functions(\/|$)/.test(path)) return "lambda";
  if (String(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) return "iam";
  if (path.startsWith("/schedules/")) return "scheduler";
  return "s3";
}

/** What every call through one proxy reads: its options, and what they resolve to once. */
interface ProxyContext {
  opts: PolicyProxyOptions;
  account: string;
  tables: ReturnType<typeof localTables>;
  s3Creds: { accessKeyId: string; secretAccessKey: string };
  upstreamS3: URL;
  upstreamDynamo: URL;
  evaluator: PolicyEvaluator;
}

export function createPolicyProxy(
  opts: PolicyProxyOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const account = opts.account ?? LOCAL_ACCOUNT;
  const ctx: ProxyContext = {
    opts,
    account,
    tables: localTables(opts.region, account),
    s3Creds: opts.s3Credentials ?? { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY },
    upstreamS3: new URL(opts.upstream.s3.endpoint),
    upstreamDynamo: new URL(opts.upstream.dynamodb.endpoint),
    evaluator: policyEvaluator(opts.evaluation),
  };
  return (req, res) => {
    // Which service's error shape to answer in before the signature says which service it is for.
    let service = unsignedService(req);
    (async () => {
      const head = headOf(req);
      if (!head.cred) throw head.credError;
      const presignedCred = "amzDate" in head.cred ? head.cred : undefined;
      if (presignedCred) {
        if (presignedCred.service !== "s3")
          throw new Refused("AccessDenied", "Only S3 takes presigned URLs here.", 403);
        if (presignedCred.region !== ctx.opts.region)
          throw new Refused(
            "AuthorizationQueryParametersError",
            `The credential scope's region must be ${ctx.opts.region}.`,
            400,
          );
        return await s3Call(ctx, req, res, presignedCred);
      }
      const cred = head.cred;
      const emulatedService = EMULATED_SERVICES.find((s) => s === cred.service);
      if (cred.service !== "dynamodb" && cred.service !== "s3" && !emulatedService)
        throw new Refused(
          "AccessDenied",
          `The local cloud's proxy serves DynamoDB, S3, KMS, Step Functions, Lambda, Scheduler, IAM, CloudWatch Logs and CodeBuild, not ${cred.service}.`,
          403,
        );
      service = emulatedService ?? (cred.service as Service);
      // IAM is global: its calls are signed for us-east-1 whatever the region.
      if (cred.region !== (service === "iam" ? "us-east-1" : ctx.opts.region))
        throw new Refused(
          service === "s3" ? "AuthorizationHeaderMalformed" : "IncompleteSignature",
          `The credential scope's region must be ${ctx.opts.region}, not ${cred.region}.`,
          400,
        );
      if (emulatedService) return await emulatedCall(ctx, req, res, cred, emulatedService);
      await (service === "dynamodb" ? dynamodbCall(ctx, req, res, cred) : s3Call(ctx, req, res, cred));
    })().catch((err) => {
      req.resume();
      if (err instanceof Refused) return sendRefusal(res, service, err);
      sendRefusal(res, service, new Refused("InternalError", "The proxy failed to handle the request.", 500));
    });
  };
}

async function authenticate(
  ctx: ProxyContext,
  req: IncomingMessage,
  cred: Credential | PresignedCredential,
  payloadHash: string | undefined,
): Promise<ProxyPrincipal> {
  const req_ = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers };
  if ("amzDate" in cred) {
    const at = presignedTime(cred);
    const who = ctx.opts.principal(cred.accessKeyId);
    if (!who) throw new Refused("InvalidAccessKeyId", "Unknown access key", 403);
    if (!(await presignatureMatches(req_, cred, who.secretAccessKey, at)))
      throw new Refused("SignatureDoesNotMatch", "The request signature does not match.", 403);
    return who;
  }
  const at = requestTime(req.headers["x-amz-date"]);
  if (String(req.headers["x-amz-date"]).slice(0, 8) !== cred.date)
    throw new Refused("SignatureDoesNotMatch", "The credential scope's date is not the request's date.", 403);
  const who = ctx.opts.principal(cred.accessKeyId);
  if (!who) throw new Refused("InvalidAccessKeyId", "Unknown access key", 403);
  if (!(await signatureMatches(req_, cred, who.secretAccessKey, at, payloadHash)))
    throw new Refused("SignatureDoesNotMatch", "The request signature does not match.", 403);
  return who;
}

function authorize(ctx: ProxyContext, who: ProxyPrincipal, auths: Authorization[]): void {
  const { evaluator } = ctx;
  const denial =
    evaluator.firstDenial(who.arn, ctx.account, who.policy, auths) ??
    (who.boundary ? evaluator.firstDenial(who.arn, ctx.account, who.boundary, auths) : undefined);
  if (denial) throw accessDenied(who.arn, denial);
}

async function dynamodbCall(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse, cred: Credential) {
  const body = await readLimited(req, MAX_DYNAMO_BODY);
  const who = await authenticate(ctx, req, cred, sha256Hex(body));
  const op = dynamoOperation(req.headers["x-amz-target"]);
  const input = jsonOf(body);
  authorize(ctx, who, dynamoAuthorizations(op, input, ctx.tables));
  if (ctx.opts.storage && who.deployment)
    await chargeDynamoWrite(ctx.opts.storage, who.deployment, op, input);
  // What was checked is what DynamoDB Local reads: a duplicate JSON key cannot mean one thing here, another there.
  const checked = Buffer.from(JSON.stringify(input));
  const headers = {
    ...passed(req, ["transfer-encoding"]),
    host: ctx.upstreamDynamo.host,
    "content-length": String(checked.length),
  };
  forward(req, res, ctx.opts.upstream.dynamodb, headers, checked);
}

async function s3Call(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
  cred: Credential | PresignedCredential,
) {
  const method = req.method ?? "GET";
  const presigned = "amzDate" in cred;
  const declared = presigned ? "UNSIGNED-PAYLOAD" : req.headers["x-amz-content-sha256"];
  if (typeof declared !== "string" || !(declared === "UNSIGNED-PAYLOAD" || /^[0-9a-f]{64}$/.test(declared)))
    throw new Refused(
      "InvalidArgument",
      "x-amz-content-sha256 must be UNSIGNED-PAYLOAD or the payload's SHA-256 (no streaming signatures).",
      400,
    );
  // Authenticated first, as S3 does: a caller without a valid signature learns nothing of how its call reads.
  const { call, error: unreadable } = s3CallOf(req);
  const body = call?.deleteObjects ? await readLimited(req, MAX_DELETE_BODY) : undefined;
  const who = await authenticate(ctx, req, cred, body && sha256Hex(body));
  if (!call) throw unreadable;
  const bucket = call.bucket ?? "";
  const auths = body
    ? s3DeleteObjects(body.toString("utf8")).map(({ key, versioned }) => ({
        action: versioned ? "s3:DeleteObjectVersion" : "s3:DeleteObject",
        resource: objectArn(bucket, key),
        context: {},
      }))
    : call.authorizations;
  authorize(ctx, who, auths);
  const url = headOf(req).target;
  if (ctx.opts.storage && who.deployment)
    await chargeS3Write(ctx.opts.storage, who.deployment, {
      method,
      url,
      headers: req.headers,
      call,
    });
  const headers = {
    ...passed(req, ["authorization", "x-amz-date"]),
    host: ctx.upstreamS3.host,
    ...(presigned ? { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" } : {}),
  };
  // A presigned URL's own authentication goes no further: the upstream request is signed as the proxy.
  const query = queryOf(url);
  const signed = await signer("s3", ctx.opts.region, ctx.s3Creds).sign({
    method,
    protocol: ctx.upstreamS3.protocol,
    hostname: ctx.upstreamS3.hostname,
    port: Number(ctx.upstreamS3.port) || undefined,
    path: url.split("?")[0],
    query,
    headers,
  });
  forward(req, res, ctx.opts.upstream.s3, signed.headers, body, url);
}

async function emulatedCall(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
  cred: Credential,
  service: EmulatedService,
) {
  if (!ctx.opts.upstream.emulator || !ctx.opts.kms)
    throw new Refused(
      "AccessDeniedException",
      `The local cloud's proxy does not serve ${service} here.`,
      403,
    );
  const body = await readLimited(req, MAX_EMULATED_BODY);
  const who = await authenticate(ctx, req, cred, sha256Hex(body));
  const target = req.headers["x-amz-target"];
  // The emulator picks the service by the request's shape: it must be the one the signature names, or a call
  // allowed as one service (a Lambda invoke, a KMS Decrypt) would run as another (KMS, IAM, Logs, Step Functions).
  const shape = emulatedServiceOf({
    method: req.method ?? "GET",
    url: req.url ?? "/",
    target: typeof target === "string" ? target : undefined,
    contentType: req.headers["content-type"],
  });
  if (shape !== service)
    throw new Refused(
      "UnknownOperationException",
      `The request is not a ${service} call (its path, X-Amz-Target and Content-Type read as ${shape ?? "no service's"}).`,
    );
  // IAM's Query protocol form-encodes its members (a member named twice could read as either: refused); the
  // others are JSON.
  const input = !body.length
    ? undefined
    : service === "iam"
      ? iamMembers(body)
      : (jsonOf(body) as Record<string, unknown>);
  const call = {
    target: typeof target === "string" ? target : undefined,
    method: req.method ?? "GET",
    url: req.url ?? "/",
  };
  // A Lambda payload is the function's event whatever it holds; the other services take a JSON object.
  if (
    service !== "lambda" &&
    input !== undefined &&
    (typeof input !== "object" || input === null || Array.isArray(input))
  )
    throw new Refused("SerializationException", "The request body is not a JSON object.");
  authorize(
    ctx,
    who,
    serviceAuthorizations(
      service,
      // An invocation's payload is the function's: only the control plane's calls are read as members.
      {
        ...call,
        input: service === "lambda" && /invocations$/.test(call.url.split("?")[0]) ? undefined : input,
      },
      {
        region: ctx.opts.region,
        account: ctx.account,
        ...ctx.opts.kms,
        ...(ctx.opts.iamRole ? { iamRole: ctx.opts.iamRole } : {}),
      },
    ),
  );
  const to = ctx.opts.upstream.emulator;
  forward(
    req,
    res,
    to,
    {
      ...passed(req, ["transfer-encoding"]),
      host: new URL(to.endpoint).host,
      "content-length": String(body.length),
      [CALLER_HEADER]: who.arn,
    },
    body,
  );
}

/** Sends what was allowed on to its backend, with the backend's token (whatever token the caller sent is dropped). */
function forward(
  req: IncomingMessage,
  res: ServerResponse,
  backend: Backend,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer | undefined,
  path = req.url,
) {
  const to = new URL(backend.endpoint);
  const up = httpRequest(
    {
      hostname: to.hostname,
      port: to.port,
      method: req.method,
      path,
      headers: { ...headers, [BACKEND_TOKEN_HEADER]: backend.token },
    },
    (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    },
  );
  up.on("error", (err: NodeJS.ErrnoException) => {
    // Only the error's code (ECONNRESET, ECONNREFUSED…): what failed, never the backend's address or token.
    const why = typeof err.code === "string" && /^E[A-Z_]+$/.test(err.code) ? `: ${err.code}` : "";
    if (!res.headersSent)
      res.writeHead(503, { "content-type": "text/plain" }).end(`upstream unavailable${why}`);
    else res.destroy();
  });
  res.on("close", () => up.destroy());
  if (body) up.end(body);
  else req.pipe(up);
}
