import type { MiddlewareObj } from "@middy/core";
import type { Context } from "aws-lambda";
import type { z } from "zod";
import { config } from "../config.ts";
import {
  HttpError,
  storeLimitError,
  Unauthorized,
  ValidationFailed,
  type ValidationIssue,
} from "../errors.ts";
import { decodeBody } from "../ingest/body.ts";
import { appendLogContext, bindLogContext, logger, streamInLogContext } from "../log.ts";
import { type CorsPolicy, corsHeaders, withCors } from "./cors.ts";
import { bodyBuffer, type HttpEvent, type HttpResult, json } from "./event.ts";
import { nestedDeeperThan } from "./json-depth.ts";
import { toValidationIssues } from "./validation.ts";

// The handler toolkit's middy middlewares, small local ones in the style of middy's own packages
// (http-json-body-parser, validator, http-error-handler). defineHandler uses them in this order: logContext,
// httpErrorHandler, auth, jsonBodyParser (routes with a JSON body), validator. The event is left as it came;
// what a middleware finds goes on the invocation's context (as middy's packages do with `setToContext`), from
// which defineHandler builds the handler's RequestContext.
export type Schema = z.ZodType;
export type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** A request's path parameters, query and body once validated. */
export interface Input<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
}

/** The Lambda context with what the middlewares found. */
export interface ToolkitContext<I extends Input = Input> extends Context {
  /** auth: the workspace, always from the credentials; "" on a public route. */
  tenantId?: string;
  /** jsonBodyParser: the decoded JSON body; undefined when the request has none. */
  jsonBody?: unknown;
  /** validator: the validated input. */
  input?: I;
}

type Middleware<I extends Input = Input> = MiddlewareObj<HttpEvent, HttpResult, Error, ToolkitContext<I>>;

/** The request's id: API Gateway's, else the invocation's. */
export const requestIdOf = (event: HttpEvent, context: Partial<Context>): string =>
  event.requestContext?.requestId ?? context.awsRequestId ?? "local";

/**
 * Names the request in the log context: its id and route key. The context itself is opened around the whole
 * invocation by defineHandler (AsyncLocalStorage runs a function; a middleware's hooks cannot wrap the rest of
 * the chain). A streamed response is read after the handler returned: its chunks are still produced in it.
 */
export function logContext(): Middleware {
  return {
    before: ({ event, context }) => {
      appendLogContext({ request_id: requestIdOf(event, context), route: event.routeKey });
    },
    after: (request) => {
      const response = request.response;
      if (!response?.stream) return;
      request.response = {
        ...response,
        stream: streamInLogContext(response.stream),
        onAbort: response.onAbort && bindLogContext(response.onAbort),
      };
    },
  };
}

/**
 * Errors to responses: an HttpError (or a store limit the request's data hit) to its status and body; anything
 * else to a 500 naming the request id, with the error and its stack written to the log and never sent.
 */
export function httpErrorHandler(): Middleware {
  return {
    onError: (request) => {
      const err =
        request.error instanceof HttpError
          ? request.error
          : (storeLimitError(request.error) ?? request.error);
      if (err instanceof HttpError) {
        request.response = json(err.status, err.body(), err.headers());
        return;
      }
      logger.error("unhandled error", { error: err });
      request.response = json(500, {
        error: "internal",
        request_id: requestIdOf(request.event, request.context),
      });
    },
  };
}

/** The workspace the platform's router authenticated, as an HTTP API Lambda authorizer passes it on. */
export const routerTenant = (event: HttpEvent): string | undefined =>
  (event.requestContext as { authorizer?: { lambda?: { tenant_id?: unknown } } }).authorizer?.lambda
    ?.tenant_id as string | undefined;

/**
 * How the route a request came by is authenticated, from the route manifest, which the functions layer passes in
 * (functions/handler.ts); this toolkit never reads the manifest. Unknown routes need a key.
 * - true: an API key, checked here, and the request counts against its workspace's rate limit;
 * - "router": a route a deployment's runtime serves: requests arrive through the platform's router, which
 *   checked the API key (the runtime can read no key) and the rate limit, and passes the workspace on in the
 *   authorizer context; a request without one is refused;
 * - false: public.
 */
export type NeedsAuth = (routeKey: string) => boolean | "router";

/**
 * How a keyed route's caller is checked: the platform's API keys and their workspaces' rate limits (shared/auth),
 * handed in by the functions layer (functions/handler.ts), so this toolkit reads no records.
 */
export interface KeyCheck {
  /** The workspace of the request's API key; throws the 401 (or 403) of a missing or refused one. */
  authenticate(headers: Record<string, string | undefined>): Promise<string>;
  /** Counts the request against its workspace's rate limit; throws the 429 beyond it. */
  admit(tenant: string): Promise<void>;
}

/** Without a key check handed in, a keyed route lets nobody in. */
export const NO_KEYS: KeyCheck = {
  authenticate: async () => {
    throw new Unauthorized();
  },
  admit: async () => {},
};

async function resolveTenant(event: HttpEvent, how: true | "router", keys: KeyCheck): Promise<string> {
  if (how === true) return keys.authenticate(event.headers ?? {});
  const tenant = routerTenant(event);
  if (!tenant) throw new Unauthorized();
  return tenant;
}

/**
 * Resolves the tenant unless the route is public, and adds it to the log context. Used before anything looks
 * at the input: a bad key is a 401 whatever else is wrong with the request. Then the request counts against the
 * workspace's rate limit (429 beyond it, decided in memory: nothing waits for the count's write).
 */
export function auth(needsAuth: NeedsAuth, keys: KeyCheck = NO_KEYS): Middleware {
  return {
    before: async ({ event, context }) => {
      const how = needsAuth(event.routeKey);
      context.tenantId = how ? await resolveTenant(event, how, keys) : "";
      if (!context.tenantId) return;
      appendLogContext({ tenant_id: context.tenantId });
      if (how === true) await keys.admit(context.tenantId);
    },
  };
}

/**
 * Arrays and objects nested deeper than this are a 422: recursive code (JSON.stringify, the marshaller) must
 * never meet thousands. Values stored as DynamoDB maps stop at 32 levels anyway (storeLimitError); trace
 * payloads, stored as JSON text, may go deeper.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Decodes the JSON body (compressed JSON too, the SDKs gzip when /info allows it, with the same size cap);
 * malformed or too deeply nested JSON is a 422 at loc ["body"].
 */
export function jsonBodyParser(): Middleware {
  return {
    before: ({ event, context }) => {
      const raw = decodeBody(bodyBuffer(event), event.headers ?? {}, config.maxBodyBytes);
      if (raw.length === 0) return;
      const text = raw.toString("utf8");
      if (nestedDeeperThan(text, MAX_JSON_DEPTH))
        throw new ValidationFailed([
          { loc: ["body"], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, type: "json_invalid" },
        ]);
      try {
        context.jsonBody = JSON.parse(text);
      } catch (err) {
        throw new ValidationFailed([
          { loc: ["body"], msg: `JSON decode error: ${(err as Error).message}`, type: "json_invalid" },
        ]);
      }
    },
  };
}

/** A value as its schema outputs it (undefined without a schema); a failure's issues are added to `issues`. */
function parse(
  source: string,
  schema: Schema | undefined,
  value: unknown,
  issues: ValidationIssue[],
): unknown {
  if (!schema) return undefined;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  issues.push(...toValidationIssues(source, r.error));
  return undefined;
}

/**
 * Validates the path parameters, query and body against the route's schemas; all issues of every source are
 * reported together (HTTPValidationError, 422). A route reading its raw body validates its body schema, if
 * any, against nothing; a JSON route's empty body is `{}`.
 */
export function validator<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
>(schemas: {
  params?: P;
  query?: Q;
  body?: B;
  rawBody?: boolean;
}): Middleware<Input<Out<P>, Out<Q>, Out<B>>> {
  return {
    before: ({ event, context }) => {
      const issues: ValidationIssue[] = [];
      const input = {
        params: parse("path", schemas.params, event.pathParameters ?? {}, issues),
        query: parse("query", schemas.query, event.queryStringParameters ?? {}, issues),
        body: parse("body", schemas.body, schemas.rawBody ? undefined : (context.jsonBody ?? {}), issues),
      };
      if (issues.length) throw new ValidationFailed(issues);
      // Every value parsed: each is what its schema outputs (undefined where the route has none).
      context.input = input as Input<Out<P>, Out<Q>, Out<B>>;
    },
  };
}

/** The CORS policy a route's answers carry, or none (a gateway in front answers CORS for it). */
export type CorsOf = (event: HttpEvent) => Promise<CorsPolicy | undefined> | undefined;

/**
 * CORS headers on a browser's answers (a request with an Origin), errors included, for the routes `corsOf`
 * gives a policy: those whose answers nothing in front decorates (a deployment's public agent routes in AWS).
 */
export function answerCors(corsOf: CorsOf): Middleware {
  const add = async (request: { event: HttpEvent; response?: HttpResult | null }) => {
    const headers = request.event.headers ?? {};
    if (headers.origin === undefined || !request.response) return;
    const policy = await corsOf(request.event);
    if (!policy) return;
    const method = request.event.requestContext?.http?.method ?? "GET";
    request.response = {
      ...request.response,
      headers: withCors(
        request.response.headers as Record<string, string> | undefined,
        corsHeaders(policy, method, headers),
      ),
    };
  };
  return { after: add, onError: add };
}
