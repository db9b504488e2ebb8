import type { Caller } from "../../shared/agent/ops/index.ts";
import { type AgentServer, callerOf, servingServer } from "../../shared/agent/ops/index.ts";
import type { HandlerSpec, LambdaHttpHandler, RequestContext, Schema } from "../../shared/http/handler.ts";
import type { Out } from "../../shared/http/middlewares.ts";
import { defineHandler } from "../handler.ts";

// The handler toolkit of the agent server's routes a deployment's runtime serves: the toolkit of every route
// (functions/handler.ts) plus what an agent handler acts with — the agent server its runtime's entry point built
// and serves the request with (ops/server.ts `serveWith`), and the caller the router admitted. A handler calls
// the server's operations only.
export { reply, z } from "../handler.ts";

export interface AgentRequest<P, Q, B> extends RequestContext<P, Q, B> {
  server: AgentServer;
  caller: Caller;
}

export function defineAgentHandler<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(
  spec: Omit<HandlerSpec<P, Q, B>, "handle"> & {
    handle: (ctx: AgentRequest<Out<P>, Out<Q>, Out<B>>) => Promise<unknown> | unknown;
  },
): LambdaHttpHandler {
  return defineHandler<P, Q, B>({
    ...spec,
    handle: (ctx) => spec.handle({ ...ctx, server: servingServer(), caller: callerOf(ctx.tenantId) }),
  });
}
