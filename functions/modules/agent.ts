import type { ModuleMap } from "../load.ts";
import { runtimeModules } from "./runtime.ts";

/** Every agent-server route's handler: the runtime's, and those platform code answers (modules.test.ts). */
export const agentModules: ModuleMap = {
  ...runtimeModules,
  "agent/ok": () => import("../agent/ok.ts"),
  "agent/system/metrics": () => import("../agent/system/metrics.ts"),
  "agent/system/openapi": () => import("../agent/system/openapi.ts"),
  "agent/system/docs": () => import("../agent/system/docs.ts"),
  "agent/ui/asset": () => import("../agent/ui/asset.ts"),
};
