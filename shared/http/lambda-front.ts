import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import { config } from "../config.ts";
import { type HttpEvent, type HttpResult, queryMap } from "./event.ts";

// The agent server sits behind an API Gateway REST API in AWS, because REST APIs can stream a Lambda's
// response (SSE) and HTTP APIs cannot. Its events are payload v1; handlers speak v2, so a v1 event is
// translated at the door. Streaming routes' functions are wrapped with Lambda's streamifyResponse, which
// writes the status and headers first (HttpResponseStream.from) and then each chunk as the handler yields it.

/** A v1 (REST API) event as the v2 shape handlers read; a v2 event is returned as is. */
export function toHttpEvent(event: HttpEvent | APIGatewayProxyEvent): HttpEvent {
  if (!("httpMethod" in event) || !event.httpMethod) return event as HttpEvent;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v;
  // Every value of a repeated name (the single-valued map holds only the last), joined as HTTP APIs join them.
  const pairs = Object.entries(event.multiValueQueryStringParameters ?? {}).flatMap(([k, vs]) =>
    (vs ?? []).map((v): [string, string] => [k, v]),
  );
  if (!pairs.length)
    for (const [k, v] of Object.entries(event.queryStringParameters ?? {}))
      if (v !== undefined) pairs.push([k, v]);
  const query = queryMap(pairs);
  return {
    version: "2.0",
    routeKey: `${event.httpMethod} ${event.resource}`,
    rawPath: event.path,
    rawQueryString: new URLSearchParams(pairs).toString(),
    headers,
    queryStringParameters: pairs.length ? query : undefined,
    pathParameters: (event.pathParameters ?? undefined) as HttpEvent["pathParameters"],
    body: event.body ?? undefined,
    isBase64Encoded: event.isBase64Encoded,
    requestContext: {
      requestId: event.requestContext?.requestId,
      domainName: event.requestContext?.domainName,
      stage: event.requestContext?.stage,
      // The caller's address as API Gateway saw it (per-client limits key on it).
      http: {
        method: event.httpMethod,
        path: event.path,
        sourceIp: event.requestContext?.identity?.sourceIp,
      },
    } as HttpEvent["requestContext"],
  } as HttpEvent;
}

/** Lambda's response-streaming globals (present only inside the Node.js Lambda runtime). */
export interface ResponseStream {
  write(chunk: string | Uint8Array): boolean;
  end(): void;
  on(event: "close" | "error", fn: () => void): void;
}
/** `E`: the event the streamed function takes (the router also takes REST API events as they come). */
export interface LambdaGlobals<E = HttpEvent> {
  streamifyResponse(
    fn: (event: E, stream: ResponseStream, context: Partial<Context>) => Promise<void>,
  ): unknown;
  HttpResponseStream: {
    from(
      stream: ResponseStream,
      meta: { statusCode: number; headers?: Record<string, string> },
    ): ResponseStream;
  };
}

/** Writes a handler's result to a Lambda response stream: status and headers, then the body or each chunk. */
export async function writeToStream(result: HttpResult, raw: ResponseStream, lambda: LambdaGlobals) {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  await writeBody(result, lambda.HttpResponseStream.from(raw, { statusCode: result.statusCode, headers }));
}

/** A result's body to a stream, chunk by chunk for a streamed one; a client that leaves early aborts it. */
export async function writeBody(result: HttpResult, out: ResponseStream): Promise<void> {
  let ended = false;
  out.on("close", () => {
    if (!ended) result.onAbort?.();
  });
  try {
    if (result.stream) for await (const chunk of result.stream) out.write(chunk);
    else if (result.body)
      out.write(result.isBase64Encoded ? Buffer.from(result.body, "base64") : result.body);
  } finally {
    ended = true;
    out.end();
  }
}

/**
 * The exported handler of a function whose route streams (LAMBDA_RESPONSE_STREAMING=1, set by the CDK app):
 * a streamified wrapper inside Lambda, the plain handler anywhere else (the local gateway streams by itself).
 */
export function streamingExport<
  H extends (event: HttpEvent, context?: Partial<Context>) => Promise<HttpResult>,
>(handler: H): H {
  const lambda = (globalThis as { awslambda?: LambdaGlobals }).awslambda;
  if (!config.wiring.responseStreaming || !lambda) return handler;
  const streamed = lambda.streamifyResponse(async (event, stream, context) =>
    writeToStream(await handler(event, context), stream, lambda),
  );
  return Object.assign(streamed as H, handler);
}
