import { InvokeCommand } from "@aws-sdk/client-lambda";
import { agentPathAtOwnOrigin } from "../../shared/agent/edge/origin.ts";
import { lambda } from "../../shared/aws/clients.ts";
import { config } from "../../shared/config.ts";
import type { HttpEvent, HttpResult } from "../../shared/http/event.ts";
import { type CompiledRoute, compileRoutes, matchRoute } from "../../shared/http/route-match.ts";
import { type MountedRoute, mountedRoutes, routes, servedByRuntime } from "../routes.ts";

// A deployment's own origin in AWS (`<deployment_id>.<AGENT_ORIGIN_DOMAIN>`, a wildcard custom domain whose one
// catch-all sends every path to the agent router): the path is the deployment's own, matched against the agent
// server's routes as `/agents/<deployment_id><path>`, the same routes the agent API serves under that prefix.
// Nothing of the platform (console, platform API) is served there.

let agentRoutes: CompiledRoute<MountedRoute>[] | undefined;

/**
 * The request as the agent API would have sent it under `/agents/<deployment_id>` (route key, path and path
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

/**
 * The answer of an agent route no runtime serves (health, docs, OpenAPI, metrics, UI files): its own function
 * (the one the agent API calls) invoked with the request; undefined for a route a runtime serves.
 */
export async function platformAnswer(route: MountedRoute, event: HttpEvent): Promise<HttpResult | undefined> {
  if (servedByRuntime(route)) return undefined;
  const FunctionName = config.agent.originFunctions[route.handler];
  if (!FunctionName)
    throw new Error(`no function is configured for ${route.handler} (AGENT_ORIGIN_FUNCTIONS)`);
  const out = await lambda().send(
    new InvokeCommand({ FunctionName, Payload: Buffer.from(JSON.stringify(event)) }),
  );
  const text = Buffer.from(out.Payload ?? []).toString();
  if (out.FunctionError) throw new Error(`${route.handler} failed: ${text.slice(0, 500)}`);
  return JSON.parse(text) as HttpResult;
}
