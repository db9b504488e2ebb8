import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { APIGatewayProxyEvent } from "aws-lambda";
import { loadHandler } from "../../functions/modules/routes.ts";
import { type MountedRoute, mountedRoutes, servedByRuntime } from "../../functions/routes.ts";
import { deploymentCorsPolicy } from "../../shared/agent/edge/cors.ts";
import { agentDeploymentOf, agentPathAtOwnOrigin, deploymentOfHost } from "../../shared/agent/edge/origin.ts";
import { config } from "../../shared/config.ts";
import { type CorsPolicy, corsHeaders, DEFAULT_CORS, isPreflight } from "../../shared/http/cors.ts";
import { type HttpEvent, type HttpResult, queryMap } from "../../shared/http/event.ts";
import type { LambdaHttpHandler } from "../../shared/http/handler.ts";
import { type CompiledRoute, compileRoutes, matchRoute } from "../../shared/http/route-match.ts";
import { logger } from "../../shared/log.ts";
import { serveConsoleFile } from "./console-files.ts";
import { FunctionError } from "./function-error.ts";
import { BodyTooLarge, listen, readBody } from "./http-util.ts";
import { toRestEvent } from "./rest-event.ts";

// The local API Gateway: mounts every manifest route and calls its handler with an HTTP API v2 event.
type GatewayRoute = CompiledRoute<MountedRoute> & {
  /** The handler, or none for a route a deployment's runtime serves (the router takes its requests). */
  handler?: LambdaHttpHandler;
};

export interface GatewayOptions {
  /** The console's Content-Security-Policy (console-files.ts: consoleCsp); default: no attachments origin. */
  consoleCsp?: string;
  /** The routes to mount (default: all of the manifest). */
  routes?: MountedRoute[];
  loader?: (route: MountedRoute) => Promise<LambdaHttpHandler>;
  /**
   * The platform's router (functions/agent/router.ts, its bundle): every agent-server request, its CORS preflight
   * and a deployment's own origin, with the event the agent REST API gives it in AWS. When set, the routes a
   * deployment's runtime serves are not loaded here.
   */
  router?: (event: APIGatewayProxyEvent) => Promise<HttpResult>;
  /**
   * The deployment an agent-server path's id stands for when it is not a deployment id (`/agents/local`: the
   * deployment `npm start -- --graph` deployed), or undefined; the request goes on under the real id.
   */
  alias?: (id: string) => Promise<string | undefined>;
  /** Platform-internal POST endpoints (runtimes calling back), by exact path. */
  internal?: Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>;
  /**
   * CORS (shared/http/cors.ts): the policy for a path. Default: an agent server's (`/agents/<id>/…`) is its
   * deployment's, every other path has the reference defaults. false: none (a runtime's own server, behind the
   * platform's gateway which answers CORS for it).
   */
  cors?: false | ((path: string) => Promise<CorsPolicy>);
  /**
   * Asked first for every request a route matched (a runtime's custom routes and disabled route groups): its
   * answer, or undefined to let the route's handler answer.
   */
  intercept?: (event: HttpEvent, route: MountedRoute) => Promise<HttpResult | undefined>;
}

/** The gateway's default CORS policy for a path: the deployment's for an agent server, else the defaults. */
export async function pathCorsPolicy(path: string): Promise<CorsPolicy> {
  const deployment = agentDeploymentOf(path);
  return deployment === undefined ? DEFAULT_CORS : deploymentCorsPolicy(deployment);
}

const TEXT_TYPE = /^(text\/|application\/(json|x-www-form-urlencoded|xml|javascript)|[^;]*\+json)/i;

function toEvent(
  req: IncomingMessage,
  url: URL,
  body: Buffer,
  route: MountedRoute | undefined,
  params: Record<string, string>,
  tenantId?: string,
): HttpEvent {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(",") : v;
  const query = queryMap(url.searchParams);
  const text = !headers["content-encoding"] && TEXT_TYPE.test(headers["content-type"] ?? "application/json");
  const now = Date.now();
  const requestId = randomUUID();
  return {
    version: "2.0",
    routeKey: route?.routeKey ?? "$default",
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: headers.cookie?.split(";").map((c) => c.trim()),
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: Object.keys(params).length ? params : undefined,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: headers.host ?? "localhost",
      domainPrefix: "local",
      http: {
        method: req.method ?? "GET",
        path: url.pathname,
        protocol: "HTTP/1.1",
        sourceIp: req.socket.remoteAddress ?? "",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId,
      // What an HTTP API Lambda authorizer passes on: the workspace the platform's router authenticated.
      ...(tenantId ? { authorizer: { lambda: { tenant_id: tenantId } } } : {}),
      routeKey: route?.routeKey ?? "$default",
      stage: "$default",
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    body: body.length ? (text ? body.toString("utf8") : body.toString("base64")) : undefined,
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** A streamed result: headers at once, then each chunk as the handler yields it (Lambda response streaming). */
async function writeStream(res: ServerResponse, result: HttpResult & { stream: AsyncIterable<string> }) {
  let ended = false;
  res.on("close", () => {
    if (!ended) result.onAbort?.();
  });
  res.writeHead(result.statusCode, (result.headers ?? {}) as Record<string, string>);
  res.flushHeaders();
  try {
    for await (const chunk of result.stream) {
      if (res.destroyed) break;
      res.write(chunk);
    }
  } finally {
    ended = !res.destroyed;
    res.end();
  }
}

export function write(res: ServerResponse, result: HttpResult) {
  if (result.stream) return writeStream(res, result as HttpResult & { stream: AsyncIterable<string> });
  const headers: Record<string, string | number | boolean> = { ...(result.headers ?? {}) };
  const body =
    result.body === undefined
      ? ""
      : result.isBase64Encoded
        ? Buffer.from(result.body, "base64")
        : result.body;
  res.writeHead(result.statusCode, headers as Record<string, string>);
  res.end(body);
}

export const jsonResult = (statusCode: number, body: unknown): HttpResult => ({
  statusCode,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

export class Gateway {
  private compiled: GatewayRoute[] = [];
  server?: Server;

  constructor(private readonly opts: GatewayOptions = {}) {}

  async load(): Promise<void> {
    const list = this.opts.routes ?? mountedRoutes();
    const loader = this.opts.loader ?? loadHandler;
    const forwarded = (r: MountedRoute) => this.opts.router !== undefined && servedByRuntime(r);
    const handlers = await Promise.all(list.map((r) => (forwarded(r) ? undefined : loader(r))));
    this.compiled = compileRoutes(list.map((route, i) => ({ route, handler: handlers[i] })));
  }

  /** The route for a method and path: a match, or the HTTP status that explains why there is none. */
  match(method: string, path: string): { route: GatewayRoute; params: Record<string, string> } | 404 | 405 {
    return matchRoute(this.compiled, method, path);
  }

  /** Answers a request; `tenantId` is the workspace a router already authenticated (in a runtime). */
  async handle(req: IncomingMessage, res: ServerResponse, tenantId?: string): Promise<void> {
    try {
      let url = requestUrl(req.url);
      if (!url) return write(res, jsonResult(400, { detail: "Malformed request target" }));
      // A deployment's own origin (`<deployment>.localhost`): its agent server at the root, nothing else there.
      const own = this.opts.router ? deploymentOfHost(req.headers.host) : undefined;
      let asSent = url;
      if (own) {
        req.url = `${agentPathAtOwnOrigin(own, url.pathname)}${url.search}`;
        ownOrigin.add(req);
        url = requestUrl(req.url)!;
      }
      const named = agentDeploymentOf(url.pathname);
      const aliased = named !== undefined && !own ? await this.opts.alias?.(named) : undefined;
      if (aliased) {
        const at = `/agents/${named}`.length;
        req.url = `/agents/${aliased}${url.pathname.slice(at)}${url.search}`;
        url = requestUrl(req.url)!;
        asSent = url;
      }
      const found = this.match(req.method ?? "GET", url.pathname);
      const preflight = isPreflight(req.method) && found === 405;
      const routed = this.routed(found, preflight, url.pathname);
      if (routed) return await this.toRouter(req, res, asSent, routed, own);
      // CORS, before anything can fail: a preflight (any OPTIONS to a path a route serves) is answered here
      // without authentication; every other answer to a browser (an Origin), errors included, carries the headers.
      const cors = this.opts.cors ?? pathCorsPolicy;
      if (cors && (preflight || req.headers.origin !== undefined)) {
        const headers = corsHeaders(await cors(url.pathname), req.method ?? "GET", req.headers);
        for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      }
      if (preflight && cors) {
        req.resume();
        res.writeHead(204);
        return void res.end();
      }
      // A declared body over the limit is refused before anything else reads it.
      if (Number(req.headers["content-length"] ?? 0) > config.maxRequestBytes) throw new BodyTooLarge();
      const internal = req.method === "POST" ? this.opts.internal?.[url.pathname] : undefined;
      if (internal) return await internal(req, res);
      if (
        found === 404 &&
        !own &&
        (req.method === "GET" || req.method === "HEAD") &&
        (await serveConsoleFile(url.pathname, res, this.opts.consoleCsp))
      )
        return void req.resume();
      if (typeof found === "number") {
        req.resume();
        return write(res, jsonResult(found, { detail: found === 404 ? "Not Found" : "Method Not Allowed" }));
      }
      const handler = found.route.handler;
      // A route a runtime serves is the router's (routed above): none is answered here.
      if (!handler) throw new Error(`no handler for ${found.route.route.routeKey}: the router's route`);
      const body = await readBody(req, config.maxRequestBytes);
      const event = toEvent(req, url, body, found.route.route, found.params, tenantId);
      const early = this.opts.intercept && (await this.opts.intercept(event, found.route.route));
      await write(res, early || (await handler(event)));
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        // Answer once the client has finished sending, so it reads a 413 rather than a reset connection.
        await drain(req, 10_000);
        res.setHeader("connection", "close");
        return write(
          res,
          jsonResult(413, { detail: `Request body exceeds the limit of ${config.maxRequestBytes} bytes` }),
        );
      }
      // A function that failed (its init, its memory, its time): answered as API Gateway answers for it.
      if (err instanceof FunctionError) {
        logger.error("function error", { error: err });
        if (!res.headersSent) return write(res, jsonResult(500, { message: "Internal Server Error" }));
        return void res.destroy();
      }
      logger.error("gateway error", { error: err });
      if (!res.headersSent) write(res, jsonResult(500, { error: "internal", request_id: null }));
      else res.destroy();
    }
  }

  /**
   * What the router takes (the resource API Gateway would have matched): a route a runtime serves and an agent
   * server's preflight; undefined for the rest.
   */
  private routed(
    found: ReturnType<Gateway["match"]>,
    preflight: boolean,
    path: string,
  ): { resource: string; params: Record<string, string> } | undefined {
    if (!this.opts.router) return undefined;
    const deployment = agentDeploymentOf(path);
    if (deployment === undefined) return undefined;
    if (preflight) return { resource: path, params: { deployment_id: deployment } };
    if (typeof found === "number" || !servedByRuntime(found.route.route)) return undefined;
    return { resource: found.route.route.mountPath, params: found.params };
  }

  /** Hands a request to the router with the REST API's event; at a deployment's own origin, as it came there. */
  private async toRouter(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    routed: { resource: string; params: Record<string, string> },
    own: string | undefined,
  ): Promise<void> {
    if (Number(req.headers["content-length"] ?? 0) > config.maxRequestBytes) throw new BodyTooLarge();
    const body = await readBody(req, config.maxRequestBytes);
    const event = toEvent(req, url, body, undefined, {});
    const rest = own
      ? toRestEvent(event, "/{proxy+}", { proxy: url.pathname.slice(1) }, url.searchParams)
      : toRestEvent(event, routed.resource, routed.params, url.searchParams);
    await write(res, await this.opts.router!(rest));
  }

  async listen(port: number, host: string): Promise<number> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 65_000;
    return listen(this.server, port, host);
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections?.();
    await new Promise((r) => this.server!.close(r));
  }
}

/** Requests that came to a deployment's own origin (rewritten to its /agents/{id} paths). */
const ownOrigin = new WeakSet<IncomingMessage>();

/** Whether a request came to a deployment's own origin rather than the platform's shared one. */
export const atOwnOrigin = (req: IncomingMessage): boolean => ownOrigin.has(req);

function drain(req: IncomingMessage, timeoutMs: number): Promise<void> {
  if (req.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      req.destroy();
      resolve();
    }, timeoutMs);
    req.on("end", () => {
      clearTimeout(timer);
      resolve();
    });
    req.on("error", () => resolve());
    req.resume();
  });
}

/** The request target as a URL; `//x` is a path here, never a host. */
function requestUrl(target = "/"): URL | undefined {
  try {
    return new URL(target.startsWith("/") ? `http://local${target}` : target);
  } catch {
    return undefined;
  }
}
