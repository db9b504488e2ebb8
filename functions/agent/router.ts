import { InvokeWithResponseStreamCommand } from "@aws-sdk/client-lambda";
import type { APIGatewayProxyEvent } from "aws-lambda";
import { deploymentCors } from "../../shared/agent/edge/cors.ts";
import { deploymentOfHost } from "../../shared/agent/edge/origin.ts";
import { type AgentAccess, agentAccess } from "../../shared/agent/edge/router-access.ts";
import { invokeDrain } from "../../shared/agent/hosting/drain-invoke.ts";
import {
  type AnswerPlace,
  containedHeaders,
  redirectLeaves,
  singleValued,
} from "../../shared/agent/runtime/answer-headers.ts";
import { DrainAsks } from "../../shared/agent/runtime/drain-asks.ts";
import { type RuntimeEvent, splitHead } from "../../shared/agent/runtime/lambda-protocol.ts";
import { lambda } from "../../shared/aws/clients.ts";
import { LAMBDA_REQUEST_PAYLOAD_BYTES } from "../../shared/aws/lambda-limits.ts";
import { runtimeFunctionName } from "../../shared/containment/runtime-policy.ts";
import { HttpError, NotFound, ServiceUnavailable, TooManyRequests } from "../../shared/errors.ts";
import { corsHeaders, isPreflight, withCors } from "../../shared/http/cors.ts";
import { type HttpEvent, json } from "../../shared/http/event.ts";
import {
  type LambdaGlobals as FrontGlobals,
  type ResponseStream,
  toHttpEvent,
  writeBody,
} from "../../shared/http/lambda-front.ts";
import { logger } from "../../shared/log.ts";
import { type DeploymentRecord, recentDeploymentById } from "../../shared/records/control.ts";
import { ownOriginRequest, platformAnswer } from "./own-origin.ts";

// The platform's router in front of every deployment's runtime (AWS): API Gateway sends each authenticated
// agent-server route here, and the CORS preflight (OPTIONS) of every agent-server path. Platform code checks the API key and that the deployment is the workspace's and
// live, then streams the request through the runtime function version that serves the active revision
// (switched in the same transaction as the active revision, so the previous one serves until then). The
// runtime never sees a key; this function never runs a deployment's code. It also serves each deployment's own
// origin (own-origin.ts), and passes a runtime's answer on with the headers the local gateway gives it. It starts
// the drains of threads the runtime's answer asks for (runtime/drain-asks.ts): a runtime cannot invoke its own
// function.
type LambdaGlobals = FrontGlobals<HttpEvent | APIGatewayProxyEvent>;

/** Which function version serves the deployment now: 404 for another workspace's, 503 while none is live. */
function runtimeTarget(tenant: string, d: DeploymentRecord | undefined) {
  if (!d || d.tenant_id !== tenant) throw new NotFound("Deployment not found");
  const version = d.active_runtime_version;
  if (!d.active_revision_id || !version)
    throw new ServiceUnavailable("The deployment has no deployed revision yet");
  return { FunctionName: runtimeFunctionName(d.id), Qualifier: version };
}

/** The Retry-After of a throttled runtime when Lambda names none: a slot frees when one of its requests ends. */
export const THROTTLE_RETRY_AFTER_SECONDS = 5;

/**
 * Streams the request through the runtime. Lambda's throttle (the deployment's reserved concurrency, or the
 * account's, is in use; the SDK has retried it already) is the client's 429 with Retry-After, not a 5xx.
 */
async function invokeRuntime(
  target: { FunctionName: string; Qualifier: string },
  bytes: Buffer,
  signal: AbortSignal,
) {
  try {
    return await lambda().send(new InvokeWithResponseStreamCommand({ ...target, Payload: bytes }), {
      abortSignal: signal,
    });
  } catch (err) {
    if ((err as Error)?.name !== "TooManyRequestsException") throw err;
    const named = Number((err as { retryAfterSeconds?: string }).retryAfterSeconds);
    logger.warn("agent runtime throttled", { reason: (err as { Reason?: string }).Reason, ...target });
    throw new TooManyRequests(
      Number.isInteger(named) && named > 0 ? named : THROTTLE_RETRY_AFTER_SECONDS,
      "the deployment's runtime (its concurrent requests)",
    );
  }
}

async function route(raw: HttpEvent | APIGatewayProxyEvent, out: ResponseStream, aws: LambdaGlobals) {
  let event = toHttpEvent(raw);
  const method = event.requestContext?.http?.method ?? "GET";
  const headers = event.headers ?? {};
  // A deployment's own origin (Host `<deployment_id>.<AGENT_ORIGIN_DOMAIN>`, the wildcard custom domain): every
  // path is its agent server's, at the root. Elsewhere the deployment is the /agents/{deployment_id} of the path.
  const own = deploymentOfHost(headers.host);
  const deploymentId = own ?? event.pathParameters?.deployment_id ?? "";
  // The deployment, read once by id whatever its workspace (a preflight names none): its CORS policy, who may call
  // it and the runtime version that serves it all come from this record.
  const record = await recentDeploymentById(deploymentId);
  // CORS (the deployment's langgraph.json http.cors, or the defaults): API Gateway sends every OPTIONS of an
  // agent-server path here; a preflight carries no API key and is answered without authentication. Every other
  // answer to a browser (an Origin), errors included, carries the headers.
  const cors =
    isPreflight(method) || headers.origin !== undefined
      ? corsHeaders(deploymentCors(record), method, headers)
      : {};
  if (isPreflight(method)) return aws.HttpResponseStream.from(out, { statusCode: 204, headers: cors }).end();
  const fail = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    const s = aws.HttpResponseStream.from(out, {
      statusCode: status,
      headers: withCors({ "content-type": "application/json", ...headers }, cors),
    });
    s.write(JSON.stringify(body));
    s.end();
  };
  // The agent origin's catch-all on a host that names no deployment.
  if (!deploymentId) return fail(404, { detail: "Not Found" });
  if (own) {
    const found = ownOriginRequest(event, own);
    if (typeof found === "number")
      return fail(found, { detail: found === 404 ? "Not Found" : "Method Not Allowed" });
    event = found.event;
    // Health, docs, metrics and UI files: the functions the agent API calls for them answer here too.
    const result = await platformAnswer(found.route, event).catch((err: unknown) => {
      logger.error("agent route function failed", { error: err, route: found.route.handler });
      return json(502, { detail: "The route's function failed" });
    });
    if (result) {
      const its = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)]));
      const meta = { statusCode: result.statusCode, headers: withCors(its, cors) };
      return writeBody(result, aws.HttpResponseStream.from(out, meta));
    }
  }
  let target: { FunctionName: string; Qualifier: string };
  let access: AgentAccess;
  try {
    access = await agentAccess(headers, record, event.requestContext?.http?.sourceIp ?? "");
    target = runtimeTarget(access.tenant, record);
  } catch (err) {
    if (err instanceof HttpError) return fail(err.status, err.body(), err.headers());
    throw err;
  }
  // The runtime gets the request without the platform API key that let it in (agentAccess strips it).
  const payload: RuntimeEvent = {
    kind: "http",
    tenant_id: access.tenant,
    auth: access.auth,
    event: { ...event, headers: access.headers as Record<string, string> },
  };
  // A client that leaves ends the runtime's invocation too (a stream with on_disconnect=cancel cancels its run).
  const bytes = Buffer.from(JSON.stringify(payload));
  // A body within the request limit may still escape past Lambda's payload (quotes, control characters).
  if (bytes.length > LAMBDA_REQUEST_PAYLOAD_BYTES)
    return fail(413, {
      detail: `The request is larger than the ${LAMBDA_REQUEST_PAYLOAD_BYTES} bytes a runtime takes`,
    });
  const left = new AbortController();
  out.on("close", () => left.abort());
  let res: Awaited<ReturnType<typeof invokeRuntime>>;
  try {
    res = await invokeRuntime(target, bytes, left.signal);
  } catch (err) {
    if (err instanceof HttpError) return fail(err.status, err.body(), err.headers());
    throw err;
  }
  // Where a redirect of the answer may send a client that carried a platform key: within the deployment.
  const confined = access.keyCarried
    ? { host: (headers.host ?? "").toLowerCase(), prefix: own ? "" : `/agents/${deploymentId}` }
    : undefined;
  return relayAnswer(res, {
    out,
    aws,
    fail,
    cors,
    own,
    deploymentId,
    target,
    tenant: access.tenant,
    left,
    confined,
  });
}

type Relay = {
  out: ResponseStream;
  aws: LambdaGlobals;
  fail: (status: number, body: unknown) => void;
  cors: Record<string, string>;
  own: string | undefined;
  deploymentId: string;
  target: { FunctionName: string; Qualifier: string };
  tenant: string;
  left: AbortController;
  /** Set when the request carried a platform key: the answer may not redirect out of this place. */
  confined?: AnswerPlace;
};

/**
 * The runtime's streamed answer to the client: its head (status and contained headers), then its body as it
 * comes; the drain asks between parts are kicked before the invocation returns.
 */
async function relayAnswer(res: Awaited<ReturnType<typeof invokeRuntime>>, r: Relay) {
  const { out, aws, fail, cors, own, deploymentId, target, left } = r;
  // Drains of the threads the answer asks for: of the version that served it, this deployment's, this tenant's.
  const asks = new DrainAsks();
  const kicks: Promise<void>[] = [];
  const drain = (threadId: unknown) => {
    const thread = asks.take(threadId);
    if (thread === undefined) return;
    kicks.push(
      invokeDrain(r.tenant, deploymentId, target.Qualifier, thread)
        // A lost kick is the run sweeper's: its pending run is started by the next sweep.
        .catch((err) => logger.error("starting a run's drain failed", { error: err, ...target })),
    );
  };
  let buffered: Buffer = Buffer.alloc(0);
  let body: ResponseStream | undefined;
  try {
    for await (const part of res.EventStream ?? []) {
      if (part.PayloadChunk?.Payload) {
        const bytes = Buffer.from(part.PayloadChunk.Payload);
        if (body) {
          body.write(bytes);
          continue;
        }
        buffered = Buffer.concat([buffered, bytes]);
        while (!body) {
          let split: ReturnType<typeof splitHead>;
          try {
            split = splitHead(buffered);
          } catch (err) {
            // The runtime's head is not one the protocol allows (a status past 599, headers not strings): its fault.
            logger.warn("a runtime's answer was malformed", { error: err, ...target });
            left.abort();
            await Promise.all(kicks);
            return fail(502, { detail: "The deployment's runtime answered a malformed head" });
          }
          if (!split) break;
          buffered = split.rest;
          if (!split.head.prelude) {
            drain(split.head.drain);
            continue;
          }
          // The deployment's content never acts with an origin it does not own (answer-headers.ts), as locally;
          // names are lower-cased there, so a deployment's casing (two Content-Types) changes nothing.
          const { statusCode, headers } = split.head.prelude;
          if (r.confined && redirectLeaves(statusCode, headers, r.confined)) {
            logger.warn("a runtime's redirect out of its deployment was refused", { ...target });
            left.abort();
            await Promise.all(kicks);
            return fail(502, {
              detail:
                "The deployment answered a redirect out of itself, which would send the request's API key along: refused",
            });
          }
          const contained = singleValued(containedHeaders(headers, { sharedOrigin: !own }));
          body = aws.HttpResponseStream.from(out, { statusCode, headers: withCors(contained, cors) });
        }
        if (body && buffered.length) body.write(buffered);
      }
      if (part.InvokeComplete?.ErrorCode) {
        logger.error("agent runtime failed", { error: part.InvokeComplete.ErrorDetails, ...target });
        if (!body) {
          await Promise.all(kicks);
          return fail(502, { detail: "The deployment's runtime failed" });
        }
      }
    }
  } catch (err) {
    // The client left, and the runtime's invocation with it: nothing more to answer.
    if (!left.signal.aborted) throw err;
  }
  // This invocation may be frozen once it returns: the kicks go out first.
  await Promise.all(kicks);
  if (asks.refused) logger.warn("a runtime's drain asks were refused", { refused: asks.refused, ...target });
  if (!body) return fail(502, { detail: "The deployment's runtime answered nothing" });
  body.end();
}

const aws = (globalThis as { awslambda?: LambdaGlobals }).awslambda;
export const handler = aws
  ? aws.streamifyResponse((event, stream) => route(event, stream, aws))
  : async () =>
      json(501, { detail: "The router runs in AWS Lambda; the local cloud's gateway routes itself" });
