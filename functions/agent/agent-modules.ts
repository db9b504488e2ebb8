import { handlerFrom, type ModuleMap } from "../load.ts";
import type { Route } from "../routes.ts";
import { runtimeModules } from "./runtime-modules.ts";

/** Every agent-server route's handler: the runtime's, and those platform code answers (functions/modules.test.ts). */
export const agentModules: ModuleMap = {
  ...runtimeModules,
  "agent/ok": () => import("./ok.ts"),
  "agent/system/metrics": () => import("./system/metrics.ts"),
  "agent/system/openapi": () => import("./system/openapi.ts"),
  "agent/system/docs": () => import("./system/docs.ts"),
  "agent/ui/asset": () => import("./ui/asset.ts"),
};

export const loadAgentHandler = (route: Pick<Route, "handler">) => handlerFrom(agentModules, route.handler);
