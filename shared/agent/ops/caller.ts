import { NotFound } from "../../errors.ts";
import type { Clock } from "../../time.ts";
import { type AuthUser, authUser } from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import type { Kick } from "../runs/runs.ts";

// Who an operation acts for, and what it acts with. The platform's router (or the local gateway) let the request
// in either with a platform API key of the workspace (an operator) or, on a deployment with custom auth, as the
// user its `authenticate` named; the runtime runs the request inside that identity (auth-scope.ts `runAs`), and
// every operation asks the deployment's Auth about the caller before it touches storage.

export interface Caller {
  /** The workspace the router admitted the request for. */
  tenant: string;
  /** The custom-auth user (the reference's Studio user for an operator); none without custom auth. */
  user: AuthUser | undefined;
}

/** The caller of the request being served (the tenant the router passed, the identity it runs in). */
export const callerOf = (tenantId: string): Caller => ({ tenant: tenantId, user: authUser() });

/**
 * What every operation is handed by the agent server it belongs to (server.ts: built once by each process's entry
 * point), instead of reading any of it from the process: the one lookup, how runs start, and the time.
 */
export interface OpsContext {
  /**
   * The deployment an operation addresses, as the caller may see it: another workspace's (or, in a runtime, any
   * other than the one it serves) is not found.
   */
  deployment(caller: Caller, deploymentId: string): Promise<AgentDeployment>;
  /** Has a thread's next due run started: in this runtime, or by the deployment's runtime through the host. */
  kick: Kick;
  /** Now (ms): crons' next runs and ticks read it. */
  clock: Clock;
}

/** An operation handed a deployment (MCP, A2A) acts only on the caller's own workspace's. */
export function mustBeCallers(caller: Caller, d: AgentDeployment): void {
  if (d.tenant_id !== caller.tenant) throw new NotFound("Deployment not found");
}
