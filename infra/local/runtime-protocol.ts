import type { RuntimeConfig } from "../../shared/agent/runtime/serve.ts";

// Between the local cloud and a deployment's runtime child process (runtimes.ts ↔ runtime-main.ts).
export interface LocalRuntimeStart {
  runtime: RuntimeConfig;
  token: string;
  host: string;
  port: number;
  /** The platform's endpoint for this runtime's traces (its tracing project only). */
  trace_url: string;
}

/**
 * A runtime's exit code when its port was taken between the platform's free-port probe and its listen (e.g. by
 * an outgoing connection's ephemeral port): the platform starts it again on another port.
 */
export const RUNTIME_PORT_TAKEN_EXIT = 98;

/** Header names the router uses; a request without the token is refused. */
export const RUNTIME_TOKEN_HEADER = "x-runtime-token";
export const ROUTER_TENANT_HEADER = "x-router-tenant";
/** How the router let the request in (shared/agent/router-access.ts): "operator" or "custom". */
export const ROUTER_AUTH_HEADER = "x-router-auth";
