import type { RuntimeConfig } from "../../shared/agent/runtime/serve.ts";

// Between the local cloud and a deployment's runtime child process (runtimes.ts ↔ runtime-main.ts).
export interface LocalRuntimeStart {
  runtime: RuntimeConfig;
  token: string;
  /** The runtime's socket folder: it listens on runtime.sock there; platform.sock is its way out. */
  socket_dir: string;
  /** The platform's settings for it (tables, endpoints, its own AWS credentials): sealed, never in process.env. */
  settings: Record<string, string>;
}

export const RUNTIME_SOCKET = "runtime.sock";
export const PLATFORM_SOCKET = "platform.sock";

/** Header names the router uses; a request without the token is refused. */
export const RUNTIME_TOKEN_HEADER = "x-runtime-token";
export const ROUTER_TENANT_HEADER = "x-router-tenant";
/** How the router let the request in (shared/agent/edge/router-access.ts): "operator" or "custom". */
export const ROUTER_AUTH_HEADER = "x-router-auth";
