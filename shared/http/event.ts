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
