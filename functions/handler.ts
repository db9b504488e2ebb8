import { deploymentCorsPolicy } from "../shared/agent/edge/cors.ts";
import { authenticate } from "../shared/auth/api-keys.ts";
import { admitRequest } from "../shared/auth/rate-limit.ts";
import { config } from "../shared/config.ts";
import type { HttpEvent } from "../shared/http/event.ts";
import {
  defineHandler as define,
  type HandlerSpec,
  type KeyCheck,
  type LambdaHttpHandler,
  type Schema,
} from "../shared/http/handler.ts";
import { routeForKey, servedByRuntime } from "./routes.ts";

// The handler toolkit (shared/http/handler.ts) for the handlers of the route manifest: it is told, per request,
// whether the route needs an API key, from the manifest here, so shared code never reads functions/routes.ts.
export { reply, z } from "../shared/http/handler.ts";

// A route a deployment's runtime serves is reached only through the platform's router, which authenticated it.
const needsAuth = (routeKey: string): boolean | "router" => {
  const route = routeForKey(routeKey);
  if (route && servedByRuntime(route)) return "router";
  return route?.auth !== false;
};

/**
 * The CORS policy of a deployment's public agent-server routes (`/ok`, `/docs`, `/openapi.json`, UI files) in
 * AWS, where their own functions answer a browser (the router answers the others; locally the gateway all).
 */
const agentPublicCors = (event: HttpEvent) => {
  if (config.localMode) return undefined;
  const route = routeForKey(event.routeKey);
  if (route?.group !== "agent" || route.auth) return undefined;
  return deploymentCorsPolicy(event.pathParameters?.deployment_id ?? "");
};

/** The platform's API keys and its workspaces' rate limits: how a keyed route's caller is checked. */
const platformKeys: KeyCheck = { authenticate, admit: admitRequest };

export function defineHandler<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(spec: HandlerSpec<P, Q, B>): LambdaHttpHandler {
  return define(spec, needsAuth, agentPublicCors, platformKeys);
}
