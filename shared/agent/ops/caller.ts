import { NotFound } from "../../errors.ts";
import { type AuthUser, authUser } from "../auth/scope.ts";
import { type AgentDeployment, agentDeployment } from "../deployment/deployment.ts";

// Who an operation acts for. The platform's router (or the local gateway) let the request in either with a
// platform API key of the workspace (an operator) or, on a deployment with custom auth, as the user its
// `authenticate` named; the runtime runs the request inside that identity (auth-scope.ts `runAs`), and every
// operation asks the deployment's Auth about the caller before it touches storage.

export interface Caller {
  /** The workspace the router admitted the request for. */
  tenant: string;
  /** The custom-auth user (the reference's Studio user for an operator); none without custom auth. */
  user: AuthUser | undefined;
}

/** The caller of the request being served (the tenant the router passed, the identity it runs in). */
export const callerOf = (tenantId: string): Caller => ({ tenant: tenantId, user: authUser() });

/**
 * The deployment an operation addresses, as the caller may see it: another workspace's (or, in a runtime, any
 * other than the one it serves) is not found. The one lookup of the agent server's operations.
 */
export const deploymentOf = (caller: Caller, deploymentId: string): Promise<AgentDeployment> =>
  agentDeployment(caller.tenant, deploymentId);

/** An operation handed a deployment (MCP, A2A) acts only on the caller's own workspace's. */
export function mustBeCallers(caller: Caller, d: AgentDeployment): void {
  if (d.tenant_id !== caller.tenant) throw new NotFound("Deployment not found");
}
