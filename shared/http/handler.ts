import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { z } from "zod";
import { authenticate } from "../auth/api-keys.ts";
import { config } from "../config.ts";
import { HttpError, Unauthorized, ValidationFailed, type ValidationIssue } from "../errors.ts";
import { decodeBody } from "../ingest/body.ts";
import { appendLogContext, bindLogContext, logger, streamInLogContext, withLogContext } from "../log.ts";
import { bodyBuffer, type HttpEvent, type HttpResult, json } from "./event.ts";
import { streamingExport, toHttpEvent } from "./lambda-front.ts";
import { toValidationIssues } from "./validation.ts";

// The handler toolkit: declare schemas for path, query and body, get validated values and the tenant.
export type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface HandlerSpec<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
> {
  params?: P;
  query?: Q;
  body?: B;
  /** Skip JSON parsing: the handler reads ctx.raw (multipart, gzip, ...). */
  rawBody?: boolean;
  /** Response schema, for the OpenAPI document only. */
  response?: Schema;
  handle: (ctx: RequestContext<Out<P>, Out<Q>, Out<B>>) => Promise<unknown> | unknown;
}

export interface RequestContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Set only on routes that need auth: the workspace, always from the credentials. */
  tenantId: string;
  requestId: string;
  headers: Record<string, string | undefined>;
  raw: Buffer;
  event: HttpEvent;
}

/** A response with a status other than 200 or extra headers. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}
/** A streamed response (SSE): the gateway writes each chunk as it comes; `onAbort` hears a client leave. */
export class StreamReply {
  constructor(
    readonly body: AsyncIterable<string>,
    readonly headers: Record<string, string> = {},
    readonly onAbort?: () => void,
    readonly status = 200,
  ) {}
}
export const reply = Object.assign(
  (status: number, body?: unknown, headers?: Record<string, string>) => new Reply(status, body, headers),
  {
    stream: (body: AsyncIterable<string>, headers?: Record<string, string>, onAbort?: () => void) =>
      new StreamReply(body, headers, onAbort),
  },
);

function parse(source: string, schema: Schema | undefined, value: unknown, issues: ValidationIssue[]) {
  if (!schema) return undefined;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  issues.push(...toValidationIssues(source, r.error));
  return undefined;
}

function parseJsonBody(event: HttpEvent): unknown {
  // Compressed JSON (the SDKs gzip when /info allows it) is decoded with the same size cap.
  const raw = decodeBody(bodyBuffer(event), event.headers ?? {}, config.maxBodyBytes);
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new ValidationFailed([
      { loc: ["body"], msg: `JSON decode error: ${(err as Error).message}`, type: "json_invalid" },
    ]);
  }
}

function toResult(value: unknown): HttpResult {
  // A stream is read after the handler returned (by the gateway or Lambda's response stream): its chunks are
  // still produced in the request's log context.
  if (value instanceof StreamReply)
    return {
      statusCode: value.status,
      headers: value.headers,
      body: "",
      stream: streamInLogContext(value.body),
      onAbort: value.onAbort && bindLogContext(value.onAbort),
    };
  if (value instanceof Reply) {
    if (value.status === 204 || value.body === undefined)
      return { statusCode: value.status, headers: value.headers, body: "" };
    // A text body with its own non-JSON content type (an HTML page) is sent as is.
    const type = value.headers["content-type"];
    if (typeof value.body === "string" && type && !type.includes("json"))
      return { statusCode: value.status, headers: value.headers, body: value.body };
    return json(value.status, value.body, value.headers);
  }
  return json(200, value ?? null);
}

type TenantResolver = (event: HttpEvent) => Promise<string>;
let resolveTenant: TenantResolver = (event) => authenticate(event.headers ?? {});

/** The workspace the platform's router authenticated, as an HTTP API Lambda authorizer passes it on. */
export const routerTenant = (event: HttpEvent): string | undefined =>
  (event.requestContext as { authorizer?: { lambda?: { tenant_id?: unknown } } }).authorizer?.lambda
    ?.tenant_id as string | undefined;

/**
 * In a deployment's runtime: requests arrive through the platform's router, which checked the API key (the
 * runtime can read no key) and passes the workspace on; a request without one is refused.
 */
export function trustRouterTenant(): void {
  resolveTenant = async (event) => {
    const tenant = routerTenant(event);
    if (!tenant) throw new Unauthorized();
    return tenant;
  };
}

/**
 * Whether the route a request came by needs an API key: the route manifest's `auth`, which the functions layer
 * passes in (functions/handler.ts); this toolkit never reads the manifest. Unknown routes need one.
 */
export type NeedsAuth = (routeKey: string) => boolean;
const everyRoute: NeedsAuth = () => true;

export type LambdaHttpHandler = ((event: HttpEvent, context?: Partial<Context>) => Promise<HttpResult>) & {
  spec: HandlerSpec<any, any, any>;
};

export function defineHandler<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(spec: HandlerSpec<P, Q, B>, needsAuth: NeedsAuth = everyRoute): LambdaHttpHandler {
  const core = async (event: HttpEvent, context: Context): Promise<HttpResult> => {
    const requestId = event.requestContext?.requestId ?? context.awsRequestId ?? "local";
    const headers = event.headers ?? {};
    // Auth runs before anything looks at the input: a bad key is a 401 whatever else is wrong.
    const tenantId = needsAuth(event.routeKey) ? await resolveTenant(event) : "";
    if (tenantId) appendLogContext({ tenant_id: tenantId });
    const issues: ValidationIssue[] = [];
    const body = spec.body && !spec.rawBody ? parseJsonBody(event) : undefined;
    const ctx = {
      params: parse("path", spec.params, event.pathParameters ?? {}, issues),
      query: parse("query", spec.query, event.queryStringParameters ?? {}, issues),
      body: parse("body", spec.body, body ?? (spec.rawBody ? undefined : {}), issues),
      tenantId,
      requestId,
      headers,
      raw: spec.rawBody ? bodyBuffer(event) : Buffer.alloc(0),
      event,
    } as RequestContext<Out<P>, Out<Q>, Out<B>>;
    if (issues.length) throw new ValidationFailed(issues);
    return toResult(await spec.handle(ctx));
  };
  const wrapped = middy(core as any, { timeoutEarlyInMillis: 0 }).use({
    onError: (request) => {
      const err = request.error;
      const requestId = request.event?.requestContext?.requestId ?? "local";
      if (err instanceof HttpError) {
        request.response = json(err.status, err.body());
        return;
      }
      logger.error("unhandled error", { error: err });
      request.response = json(500, { error: "internal", request_id: requestId });
    },
  });
  const handler = ((event: HttpEvent, context?: Partial<Context>) => {
    const http = toHttpEvent(event);
    // Every line logged while this request is handled, from any module, carries its id and route.
    const requestId = http.requestContext?.requestId ?? context?.awsRequestId ?? "local";
    return withLogContext({ request_id: requestId, route: http.routeKey }, () =>
      wrapped(http, (context ?? { awsRequestId: http.requestContext?.requestId }) as Context),
    );
  }) as LambdaHttpHandler;
  handler.spec = spec;
  return streamingExport(handler);
}

export { z };
