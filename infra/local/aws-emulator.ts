import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { logger } from "../../shared/log.ts";
import { CALLER_HEADER, carriesToken, NOT_PROXIED } from "./backend-token.ts";
import type { LocalCodeBuild } from "./control-plane/codebuild.ts";
import type { LocalIam } from "./control-plane/iam.ts";
import { iamErrorXml } from "./control-plane/iam.ts";
import type { LambdaFunctions } from "./control-plane/lambda-functions.ts";
import type { LocalLogs } from "./control-plane/logs.ts";
import { streamWithinTimeout } from "./function-timeout.ts";
import { BodyTooLarge, listen, readBody, withoutRequestTimeouts } from "./http-util.ts";
import type { LocalKms } from "./kms.ts";
import type { LocalLambda } from "./lambda.ts";
import { type StreamingFunction, writeResponseStream } from "./lambda-stream.ts";
import { isPlatformCallerArn } from "./operator.ts";
import { emulatedServiceOf, qualifiedFunction } from "./policy-proxy/service-request.ts";
import type { LocalScheduler } from "./scheduler.ts";
import { awsError, errorFields, type LocalStepFunctions } from "./sfn.ts";

// One loopback endpoint that speaks the wire protocols of KMS, Step Functions, Lambda, EventBridge Scheduler, IAM,
// CloudWatch Logs and CodeBuild, so handlers use the real AWS SDK clients unchanged (through the policy proxy, which forwards here what
// the caller's policy allows; nothing else is answered: backend-token.ts). Lambda: Invoke (sync and Event) of the
// platform's tasks, and InvokeWithResponseStream of deployments' runtimes.
export interface EmulatedServices {
  kms: LocalKms;
  sfn: LocalStepFunctions;
  lambda: LocalLambda;
  scheduler: LocalScheduler;
  /** Functions that answer InvokeWithResponseStream (deployments' runtimes). */
  streaming?: StreamingFunction;
  /** Lambda's control plane (functions created through its API: deployments' runtimes), IAM and CloudWatch Logs. */
  functions?: LambdaFunctions;
  iam?: LocalIam;
  logs?: LocalLogs;
  /** CodeBuild: the revision build project's builds. */
  codebuild?: LocalCodeBuild;
}

/**
 * The service a request is for, read from its shape by the very function the policy proxy requires to agree with
 * the service the caller's signature names (so an allowed call of one service never runs as another's).
 */
const serviceOf = (req: IncomingMessage) => {
  const target = req.headers["x-amz-target"];
  return emulatedServiceOf({
    method: req.method ?? "GET",
    url: req.url ?? "/",
    target: typeof target === "string" ? target : undefined,
    contentType: req.headers["content-type"],
  });
};
/** An IAM call: the Query protocol's form-encoded POST to the service's root. */
const isIamCall = (req: IncomingMessage) => serviceOf(req) === "iam";

function send(
  res: import("node:http").ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { "content-type": "application/x-amz-json-1.1", ...headers });
  // AWS JSON protocols carry timestamps as epoch seconds.
  res.end(
    body === undefined
      ? ""
      : JSON.stringify(body, function (this: Record<string, unknown>, key: string, value: unknown) {
          const raw = this[key]; // before toJSON: a Date is still a Date here
          return raw instanceof Date ? raw.getTime() / 1000 : value;
        }),
  );
}

const KiB = 1024;
const MiB = 1024 * KiB;
/**
 * AWS's request limits for what the emulator answers: Lambda's payload (6 MB synchronous and streamed, 256 KB
 * asynchronous), a KMS request around its 4 KiB plaintext or 6 KiB ciphertext (base64) with its context, a Step
 * Functions or Scheduler request around its 256 KiB input.
 */
function bodyLimit(req: IncomingMessage, target: string): number {
  if (target.startsWith("TrentService.")) return 32 * KiB;
  if (target.startsWith("AWSStepFunctions.")) return 512 * KiB;
  if (req.url?.startsWith("/schedules/")) return 512 * KiB;
  return req.headers["x-amz-invocation-type"] === "Event" ? 256 * KiB : 6 * MiB;
}

/** The request's body, 413 past the call's limit (before reading it when its length says so). */
async function requestBody(req: IncomingMessage, target: string): Promise<Buffer> {
  const limit = bodyLimit(req, target);
  const tooLarge = () =>
    awsError(
      req.url?.includes("/functions/") ? "RequestTooLargeException" : "RequestEntityTooLargeException",
      `The request body must be at most ${limit} bytes.`,
      413,
    );
  if (Number(req.headers["content-length"]) > limit) throw tooLarge();
  return readBody(req, limit).catch((err) => {
    throw err instanceof BodyTooLarge ? tooLarge() : err;
  });
}

/** A JSON body as the services read it (each its own members); one that does not parse is the caller's 400. */
function jsonOf(raw: Buffer): ReturnType<typeof JSON.parse> {
  try {
    return raw.length ? JSON.parse(raw.toString("utf8")) : {};
  } catch {
    throw awsError("SerializationException", "The request body is not valid JSON.", 400);
  }
}

/** Lambda: the control plane's calls, then Invoke (sync and Event) and InvokeWithResponseStream; false: none of them. */
async function lambdaCall(
  services: EmulatedServices,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  input: ReturnType<typeof JSON.parse>,
): Promise<boolean> {
  const control = await services.functions?.handle(
    req.method ?? "GET",
    url.pathname,
    url.searchParams,
    input,
  );
  if (control) {
    send(res, control.status, control.status === 204 ? undefined : control.body);
    return true;
  }
  const fn = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
  if (fn && req.method === "POST") {
    const async = req.headers["x-amz-invocation-type"] === "Event";
    const { name, qualifier } = qualifiedFunction(
      decodeURIComponent(fn[1]),
      url.searchParams.get("Qualifier"),
    );
    // A buffered invocation of a function created through Lambda's API counts toward its reservation.
    const created = async ? undefined : services.functions?.find(name, qualifier);
    const release = created ? services.functions!.acquire(created.name) : undefined;
    try {
      const caller = req.headers[CALLER_HEADER];
      const out = await services.lambda.invoke(qualifier ? `${name}:${qualifier}` : name, input, async, {
        caller: typeof caller === "string" ? caller : "",
        bytes: Number(req.headers["content-length"] ?? 0) || 0,
        // The SDK in a function's environment sends its invocation's trace header (_X_AMZN_TRACE_ID).
        nested: req.headers["x-amzn-trace-id"] !== undefined,
      });
      const headers: Record<string, string> = out.error ? { "x-amz-function-error": out.error } : {};
      // A function's answer in bytes (a runtime's health check: the runtime protocol) goes as it is.
      if (Buffer.isBuffer(out.body)) {
        res.writeHead(out.status, { "content-type": "application/octet-stream", ...headers });
        res.end(out.body);
        return true;
      }
      send(res, out.status, out.body, headers);
      return true;
    } finally {
      release?.();
    }
  }
  const streamed = /^\/2021-11-15\/functions\/([^/]+)\/response-streaming-invocations$/.exec(url.pathname);
  if (streamed && req.method === "POST") {
    const { name, qualifier } = qualifiedFunction(
      decodeURIComponent(streamed[1]),
      url.searchParams.get("Qualifier"),
    );
    // A function created through Lambda's API counts toward its reservation while it streams (429 past it).
    const created = services.functions?.find(name, qualifier);
    const release = created ? services.functions!.acquire(created.name) : undefined;
    try {
      const abort = new AbortController();
      const bytes = services.streaming?.(name, qualifier, input, abort.signal);
      if (!bytes) throw awsError("ResourceNotFoundException", `Function not found: ${name}`, 404);
      // Within the function's timeout: past it the stream ends with Lambda's Sandbox.Timedout.
      const timed = streamWithinTimeout(bytes, created?.v.config.Timeout, randomUUID(), () => abort.abort());
      await writeResponseStream(res, timed, qualifier ?? "$LATEST", abort);
      return true;
    } finally {
      release?.();
    }
  }
  return false;
}

/** EventBridge Scheduler's schedules by name (create, update, get, delete); false: not a schedule's call. */
async function schedulerCall(
  scheduler: LocalScheduler,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  input: ReturnType<typeof JSON.parse>,
): Promise<boolean> {
  const sched = /^\/schedules\/([^/]+)$/.exec(url.pathname);
  if (!sched) return false;
  const name = decodeURIComponent(sched[1]);
  const group = url.searchParams.get("groupName") ?? undefined;
  const answer =
    req.method === "POST"
      ? await scheduler.create(name, input)
      : req.method === "PUT"
        ? await scheduler.create(name, input, true)
        : req.method === "GET"
          ? await scheduler.get(name, group)
          : req.method === "DELETE"
            ? await scheduler.delete(name, group)
            : undefined;
  if (answer === undefined) return false;
  send(res, 200, answer);
  return true;
}

/** A failed call's answer: IAM's XML error, or the JSON protocols' error (a throttle says why and when to retry). */
function failed(req: IncomingMessage, res: ServerResponse, err: unknown) {
  req.resume();
  const e = errorFields(err);
  if (!e.code) logger.error("aws emulator error", { error: err });
  const code = String(e.code ?? "InternalFailure");
  if (isIamCall(req)) {
    res.writeHead(typeof e.status === "number" ? e.status : 500, { "content-type": "text/xml" });
    return void res.end(iamErrorXml(code, String(e.message ?? err)));
  }
  // A throttle says why and when to retry, as Lambda's TooManyRequestsException does.
  const { Reason, retryAfterSeconds } = err as { Reason?: string; retryAfterSeconds?: string };
  send(
    res,
    typeof e.status === "number" ? e.status : 500,
    { __type: code, message: String(e.message ?? err), ...(Reason ? { Reason } : {}) },
    { "x-amzn-errortype": code, ...(retryAfterSeconds ? { "retry-after": retryAfterSeconds } : {}) },
  );
}

/** The emulator on `host`, answering only requests that carry `token` (backend-token.ts). */
export async function startAwsEmulator(
  services: EmulatedServices,
  host: string,
  token: string,
): Promise<{ server: Server; url: string }> {
  const server = createServer(async (req, res) => {
    try {
      if (!carriesToken(req.headers, token)) throw awsError("AccessDeniedException", NOT_PROXIED, 403);
      const target = String(req.headers["x-amz-target"] ?? "");
      const service = serviceOf(req);
      if (service === "iam") {
        if (!services.iam) throw awsError("InvalidAction", "IAM is not emulated here", 400);
        const params = new URLSearchParams((await requestBody(req, target)).toString("utf8"));
        const answer = services.iam.handle(params);
        res.writeHead(200, { "content-type": "text/xml" });
        return void res.end(answer);
      }
      if (service === undefined)
        throw awsError("UnknownOperationException", `Not emulated: ${req.method} ${req.url} ${target}`, 400);
      const input = jsonOf(await requestBody(req, target));
      const url = new URL(req.url ?? "/", "http://local");
      if (service === "logs") {
        if (!services.logs) throw awsError("UnknownOperationException", "Logs is not emulated here", 400);
        return send(res, 200, services.logs.handle(target.slice(14), input));
      }
      if (service === "codebuild") {
        if (!services.codebuild)
          throw awsError("UnknownOperationException", "CodeBuild is not emulated here", 400);
        return send(res, 200, await services.codebuild.handle(target.slice(19), input));
      }
      if (service === "kms") {
        const caller = req.headers[CALLER_HEADER];
        const platformCaller = typeof caller === "string" && isPlatformCallerArn(caller);
        return send(res, 200, services.kms.handle(target.slice(13), input, platformCaller));
      }
      if (service === "states") return send(res, 200, services.sfn.handle(target.slice(17), input));
      if (service === "lambda" && (await lambdaCall(services, req, res, url, input))) return;
      if (service === "scheduler" && (await schedulerCall(services.scheduler, req, res, url, input))) return;
      send(res, 400, {
        __type: "UnknownOperationException",
        message: `Not emulated: ${req.method} ${url.pathname} ${target}`,
      });
    } catch (err) {
      failed(req, res, err);
    }
  });
  const port = await listen(withoutRequestTimeouts(server), 0, host);
  return { server, url: `http://${host}:${port}` };
}
