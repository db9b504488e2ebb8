import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { z } from "zod";
import { withLogContext } from "../log.ts";
import { bodyBuffer, type HttpEvent, type HttpResult, json } from "./event.ts";
import { streamingExport, toHttpEvent } from "./lambda-front.ts";
import {
  answerCors,
  auth,
  type CorsOf,
  httpErrorHandler,
  type Input,
  jsonBodyParser,
  type KeyCheck,
  logContext,
  type NeedsAuth,
  type Out,
  requestIdOf,
  type Schema,
  type ToolkitContext,
  validator,
} from "./middlewares.ts";

export { routerTenant } from "./middlewares.ts";
export type { KeyCheck, NeedsAuth, Schema };

// The handler toolkit: declare schemas for path, query and body, get validated values and the tenant. The
// work is done by middy middlewares (middlewares.ts); the handler sees only its typed RequestContext.
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
  /** More for the OpenAPI document: what the schemas cannot say (headers read, a raw body, other statuses). */
  doc?: OperationDoc;
  handle: (ctx: RequestContext<Out<P>, Out<Q>, Out<B>>) => Promise<unknown> | unknown;
}

export interface OperationDoc {
  description?: string;
  /** Request headers the handler reads: name → what it holds (each required). */
  headers?: Record<string, string>;
  /** The body of a rawBody handler: its content types and what it is. */
  rawBody?: { contentTypes: string[]; description: string };
  /** Statuses besides 200 and 422: status → when. */
  responses?: Record<string, string>;
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

function toResult(value: unknown): HttpResult {
  if (value instanceof StreamReply)
    return {
      statusCode: value.status,
      headers: value.headers,
      body: "",
      stream: value.body,
      onAbort: value.onAbort,
    };
  if (value instanceof Reply) {
    if (value.status === 204 || value.body === undefined)
      return { statusCode: value.status, headers: value.headers, body: "" };
    // A text body with its own non-JSON content type (an HTML page) is sent as is, bytes (protobuf) as base64.
    const type = value.headers["content-type"];
    if (Buffer.isBuffer(value.body))
      return {
        statusCode: value.status,
        headers: value.headers,
        body: value.body.toString("base64"),
        isBase64Encoded: true,
      };
    if (typeof value.body === "string" && type && !type.includes("json"))
      return { statusCode: value.status, headers: value.headers, body: value.body };
    return json(value.status, value.body, value.headers);
  }
  return json(200, value ?? null);
}

/** Without the route manifest's word, every route needs an API key. */
const everyRoute: NeedsAuth = () => true;

export type LambdaHttpHandler = ((event: HttpEvent, context?: Partial<Context>) => Promise<HttpResult>) & {
  /** Its schemas, whatever they are (`handle` is left out: it takes its own RequestContext). */
  spec: Omit<HandlerSpec<Schema | undefined, Schema | undefined, Schema | undefined>, "handle">;
};

export function defineHandler<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(
  spec: HandlerSpec<P, Q, B>,
  needsAuth: NeedsAuth = everyRoute,
  corsOf?: CorsOf,
  keys?: KeyCheck,
): LambdaHttpHandler {
  type In = Input<Out<P>, Out<Q>, Out<B>>;
  const core = async (event: HttpEvent, context: ToolkitContext<In>): Promise<HttpResult> => {
    // The validator ran before: input is set.
    const { params, query, body } = context.input!;
    const ctx: RequestContext<Out<P>, Out<Q>, Out<B>> = {
      params,
      query,
      body,
      tenantId: context.tenantId ?? "",
      requestId: requestIdOf(event, context),
      headers: event.headers ?? {},
      raw: spec.rawBody ? bodyBuffer(event) : Buffer.alloc(0),
      event,
    };
    return toResult(await spec.handle(ctx));
  };
  const wrapped = middy<HttpEvent, HttpResult, Error, ToolkitContext<In>>(core, {
    timeoutEarlyInMillis: 0,
  }).use([
    ...(corsOf ? [answerCors(corsOf)] : []),
    logContext(),
    httpErrorHandler(),
    auth(needsAuth, keys),
    ...(spec.body && !spec.rawBody ? [jsonBodyParser()] : []),
    validator(spec),
  ]);
  // The log context lives as long as this call: logContext() fills it, and every line logged meanwhile, from
  // any module, carries it. Outside Lambda (the local gateway, tests) there is no context to pass: middy reads
  // nothing of it with timeoutEarlyInMillis 0, and the middlewares only add their findings to it.
  const handler = (event: HttpEvent, context?: Partial<Context>) =>
    withLogContext({}, () => wrapped(toHttpEvent(event), { ...context } as ToolkitContext<In>));
  return streamingExport(Object.assign(handler, { spec }));
}

export { z };
