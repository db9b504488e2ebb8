import type { HttpEvent } from "../../shared/http/event.ts";

// Builds API Gateway v2 events for unit tests of handlers.
export function httpEvent(init: {
  routeKey?: string;
  query?: Record<string, string>;
  params?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
  base64?: boolean;
}): HttpEvent {
  const routeKey = init.routeKey ?? "GET /ok";
  const [method, path] = routeKey.split(" ");
  return {
    version: "2.0",
    routeKey,
    rawPath: path ?? "/",
    rawQueryString: new URLSearchParams(init.query ?? {}).toString(),
    headers: init.headers ?? {},
    queryStringParameters: init.query,
    pathParameters: init.params,
    requestContext: {
      accountId: "0",
      apiId: "test",
      domainName: "test",
      domainPrefix: "test",
      http: {
        method: method ?? "GET",
        path: path ?? "/",
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: "test",
      },
      requestId: "req-1",
      routeKey,
      stage: "$default",
      time: "",
      timeEpoch: 0,
    },
    body: init.body,
    isBase64Encoded: init.base64 ?? false,
  };
}

/** What the route manifest says of these tests' default route: "GET /ok" needs no API key, every other one does. */
export const okIsPublic = (routeKey: string): boolean => routeKey !== "GET /ok";
