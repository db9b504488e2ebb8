import { agentPathAtOwnOrigin } from "../../shared/agent/origin.ts";
import type { HttpEvent } from "../../shared/http/event.ts";
import type { LambdaHttpHandler } from "../../shared/http/handler.ts";
import { type CompiledRoute, compileRoutes, matchRoute } from "../route-match.ts";
import { type MountedRoute, mountedRoutes, routes, servedByRuntime } from "../routes.ts";
import { handler as ok } from "./ok.ts";
import { handler as docs } from "./system/docs.ts";
import { handler as metrics } from "./system/metrics.ts";
import { handler as openapi } from "./system/openapi.ts";
import { handler as uiAsset } from "./ui/asset.ts";

// A deployment's own origin in AWS (`<deployment_id>.<AGENT_ORIGIN_DOMAIN>`, a wildcard custom domain whose one
// catch-all sends every path to the agent router): the path is the deployment's own, matched against the agent
// server's routes as `/agents/<deployment_id><path>`, the same routes the shared API serves under that prefix.
// Nothing of the platform (console, platform API) is served there.

/** The agent routes a runtime does not serve (their own functions on the shared API), answered by the router. */
export const PLATFORM_SERVED: Record<string, LambdaHttpHandler> = {
  "agent/ok": ok,
  "agent/system/docs": docs,
  "agent/system/metrics": metrics,
  "agent/system/openapi": openapi,
  "agent/ui/asset": uiAsset,
};

let agentRoutes: CompiledRoute[] | undefined;

/**
 * The request as the shared API would have sent it under `/agents/<deployment_id>` (route key, path and path
 * parameters of the agent route its path names), or the status that says why no route serves it.
 */
export function ownOriginRequest(
  event: HttpEvent,
  deploymentId: string,
): { event: HttpEvent; route: MountedRoute } | 404 | 405 {
  agentRoutes ??= compileRoutes(
    mountedRoutes(routes.filter((r) => r.group === "agent")).map((route) => ({ route })),
  );
  const method = event.requestContext?.http?.method ?? "GET";
  const path = agentPathAtOwnOrigin(deploymentId, event.rawPath ?? "/");
  const found = matchRoute(agentRoutes, method, path);
  if (typeof found === "number") return found;
  const route = found.route.route;
  return {
    route,
    event: {
      ...event,
      routeKey: `${method} ${route.mountPath}`,
      rawPath: path,
      pathParameters: found.params,
      requestContext: { ...event.requestContext, http: { ...event.requestContext?.http, method, path } },
    } as HttpEvent,
  };
}

/** The router's own answer to an agent route a runtime does not serve (health, docs, metrics, UI files). */
export function platformServed(route: MountedRoute): LambdaHttpHandler | undefined {
  return servedByRuntime(route) ? undefined : PLATFORM_SERVED[route.handler];
}
