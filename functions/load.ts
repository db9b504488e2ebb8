import type { LambdaHttpHandler } from "../shared/http/handler.ts";
import type { Route } from "./routes.ts";

// Loads a route's handler module; esbuild resolves this pattern to every handler file.
export async function loadHandler(route: Pick<Route, "handler">): Promise<LambdaHttpHandler> {
  const mod = (await import(`./${route.handler}.ts`)) as { handler?: LambdaHttpHandler };
  if (typeof mod.handler !== "function") throw new Error(`functions/${route.handler}.ts exports no handler`);
  return mod.handler;
}

/** A route a deployment's runtime serves: its handler, from the agent-server handlers only. */
export async function loadRuntimeHandler(route: Pick<Route, "handler">): Promise<LambdaHttpHandler> {
  if (!route.handler.startsWith("agent/")) throw new Error(`${route.handler} is not an agent-server handler`);
  const mod = (await import(`./agent/${route.handler.slice("agent/".length)}.ts`)) as {
    handler?: LambdaHttpHandler;
  };
  if (typeof mod.handler !== "function") throw new Error(`functions/${route.handler}.ts exports no handler`);
  return mod.handler;
}
