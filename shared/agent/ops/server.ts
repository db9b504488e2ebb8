import { AsyncLocalStorage } from "node:async_hooks";
import { NotFound } from "../../errors.ts";
import { type Clock, systemClock } from "../../time.ts";
import { type AgentDeployment, agentDeployment } from "../deployment/deployment.ts";
import type { RuntimeHost } from "../hosting/runtime-host.ts";
import type { Kick } from "../runs/runs.ts";
import { kick as workerKick } from "../runs/worker.ts";
import * as assistants from "./assistants.ts";
import type { Caller, OpsContext } from "./caller.ts";
import * as crons from "./crons.ts";
import * as runs from "./runs.ts";
import * as store from "./store.ts";
import * as system from "./system.ts";
import * as threads from "./threads.ts";

// The agent server as one value: built once by each process's entry point — a deployment's runtime (AWS:
// functions/agent/runtime.ts; locally: infra/local/runtime-main.ts) or a platform process (the cron tick, the
// run sweeper, the platform's own agent routes: functions/agent/platform.ts) — and handed to what serves
// requests. Its operations (runs, threads, assistants, crons, store, system) each take the caller and the
// deployment id and do the lookup, the authorization, the multitask strategy and the kick inside. Which kind of
// process it is is the entry point's word, never read from the environment:
// - a runtime serves its one deployment (any other id is not found) and executes its runs itself;
// - a platform process reads deployments from their records and has their runtimes execute runs (the host).

export type AgentServerOptions = (
  | {
      /** A deployment's runtime: the deployment it serves (startRuntime), whose runs execute in it. */
      runtime: AgentDeployment;
    }
  | {
      /** A platform process: how a deployment's runtime is asked to start a thread's runs. */
      host: Pick<RuntimeHost, "kick">;
    }
) & {
  /** Now (ms); the wall clock unless a test sets it. */
  clock?: Clock;
};

/** A module of operations with the server's context bound: each takes the caller first. */
type Bound<M> = {
  [K in keyof M]: M[K] extends (s: OpsContext, ...args: infer A) => infer R ? (...args: A) => R : never;
};

function bind<M extends object>(ops: M, s: OpsContext): Bound<M> {
  const out: Record<string, unknown> = {};
  for (const [name, op] of Object.entries(ops))
    if (typeof op === "function") out[name] = (...args: unknown[]) => op(s, ...args);
  return out as Bound<M>;
}

export interface AgentServer {
  /** The deployment an operation addresses, as `caller` may see it (MCP and A2A read it once per call). */
  deployment(caller: Caller, deploymentId: string): Promise<AgentDeployment>;
  /** Now (ms), as the server's operations read it. */
  clock: Clock;
  runs: Bound<typeof runs>;
  threads: Bound<typeof threads>;
  assistants: Bound<typeof assistants>;
  crons: Bound<typeof crons>;
  store: Bound<typeof store>;
  system: Bound<typeof system>;
}

/** A runtime's lookup: its own deployment, for its own workspace; any other is not found. */
const servedOnly =
  (d: AgentDeployment) =>
  async (caller: Caller, deploymentId: string): Promise<AgentDeployment> => {
    if (d.tenant_id !== caller.tenant || d.deployment_id !== deploymentId)
      throw new NotFound("Deployment not found");
    return d;
  };

/** A platform's kick: the deployment's runtime starts the thread's next due run (an asynchronous invoke). */
const hostKick = (host: Pick<RuntimeHost, "kick">): Kick => {
  return (d, threadId) => host.kick(d.tenant_id, d.deployment_id, threadId);
};

export function createAgentServer(options: AgentServerOptions): AgentServer {
  const clock = options.clock ?? systemClock;
  const s: OpsContext =
    "runtime" in options
      ? { deployment: servedOnly(options.runtime), kick: workerKick, clock }
      : {
          deployment: (caller, deploymentId) => agentDeployment(caller.tenant, deploymentId),
          kick: hostKick(options.host),
          clock,
        };
  return {
    deployment: s.deployment,
    clock,
    runs: bind(runs, s),
    threads: bind(threads, s),
    assistants: bind(assistants, s),
    crons: bind(crons, s),
    store: bind(store, s),
    system: bind(system, s),
  };
}

// The server a request is served by: the entry point serves each request with its one server (serveWith), and
// the agent handlers' toolkit hands it to the handler (functions/agent/handler.ts). Request-scoped, never set
// for the process.
const serving = new AsyncLocalStorage<AgentServer>();

/** Serves `fn` (one request) with `server`. */
export const serveWith = <T>(server: AgentServer, fn: () => T): T => serving.run(server, fn);

/** The server of the request being served (the entry point's): none outside one is a programming error. */
export function servingServer(): AgentServer {
  const server = serving.getStore();
  if (!server) throw new Error("An agent-server request is served outside its server (serveWith)");
  return server;
}
