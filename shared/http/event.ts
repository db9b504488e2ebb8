import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

// The only place Lambda event types are named: API Gateway HTTP API (payload v2) in and out.
export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  /** A streamed body (SSE): written chunk by chunk as it is produced; `body` is then unused. */
  stream?: AsyncIterable<string>;
  /** Called when the client goes away before the stream ended. */
  onAbort?: () => void;
};

export function bodyBuffer(event: HttpEvent): Buffer {
  if (event.body === undefined || event.body === null) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, "base64") : Buffer.from(event.body, "utf8");
}

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? "" : JSON.stringify(body),
  };
}

/**
 * Query pairs as an HTTP API (payload v2) map: a repeated name's values joined with commas. The map has no
 * prototype, so a name like `toString` or `__proto__` is an ordinary key, never an inherited member.
 */
export function queryMap(pairs: Iterable<[string, string]>): Record<string, string> {
  const query: Record<string, string> = Object.create(null);
  for (const [k, v] of pairs) query[k] = Object.hasOwn(query, k) ? `${query[k]},${v}` : v;
  return query;
}
