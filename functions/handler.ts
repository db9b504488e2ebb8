import {
  defineHandler as define,
  type HandlerSpec,
  type LambdaHttpHandler,
  type Schema,
} from "../shared/http/handler.ts";
import { routeForKey } from "./routes.ts";

// The handler toolkit (shared/http/handler.ts) for the handlers of the route manifest: it is told, per request,
// whether the route needs an API key, from the manifest here, so shared code never reads functions/routes.ts.
export { reply, z } from "../shared/http/handler.ts";

const needsAuth = (routeKey: string) => routeForKey(routeKey)?.auth !== false;

export function defineHandler<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(spec: HandlerSpec<P, Q, B>): LambdaHttpHandler {
  return define(spec, needsAuth);
}
