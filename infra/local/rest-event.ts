import type { APIGatewayProxyEvent } from "aws-lambda";
import type { HttpEvent } from "../../shared/http/event.ts";

// The event a REST API (payload v1) gives a Lambda integration, which the agent API in AWS hands the router
// (infra/stacks/api-stack.ts): made here from the gateway's HTTP API event of the same request, so the router
// bundle reads locally what it reads there (shared/http/lambda-front.ts toHttpEvent).

/**
 * `resource`: the REST resource the request matched (a route's mount path, `/{proxy+}` at a deployment's own
 * origin); `query`: the request's query, every value of a repeated name kept as API Gateway keeps them.
 */
export function toRestEvent(
  event: HttpEvent,
  resource: string,
  pathParameters: Record<string, string> | undefined,
  query: URLSearchParams,
): APIGatewayProxyEvent {
  const headers = event.headers as Record<string, string>;
  const multiValueHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]]));
  // Maps without a prototype: a query name like `toString` is a key, not an inherited member.
  const single: Record<string, string> = Object.create(null);
  const multi: Record<string, string[]> = Object.create(null);
  for (const [k, v] of query) {
    // A REST API's single-valued map holds a repeated name's last value.
    single[k] = v;
    multi[k] = Object.hasOwn(multi, k) ? [...multi[k], v] : [v];
  }
  const method = event.requestContext.http.method;
  const path = event.rawPath;
  const hasQuery = Object.keys(single).length > 0;
  return {
    resource,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? single : null,
    multiValueQueryStringParameters: hasQuery ? multi : null,
    pathParameters: pathParameters ?? null,
    stageVariables: null,
    requestContext: {
      accountId: event.requestContext.accountId,
      apiId: event.requestContext.apiId,
      authorizer: undefined,
      domainName: event.requestContext.domainName,
      httpMethod: method,
      identity: {
        sourceIp: event.requestContext.http.sourceIp,
        userAgent: event.requestContext.http.userAgent,
      } as APIGatewayProxyEvent["requestContext"]["identity"],
      path: `/prod${path}`,
      protocol: event.requestContext.http.protocol,
      requestId: event.requestContext.requestId,
      requestTimeEpoch: event.requestContext.timeEpoch,
      resourceId: "local",
      resourcePath: resource,
      stage: "prod",
    },
    body: event.body ?? null,
    isBase64Encoded: event.isBase64Encoded,
  };
}
