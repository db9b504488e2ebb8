import { authenticate, withoutPlatformKeys } from "../../auth/api-keys.ts";
import { EndUserLimiter } from "../../auth/end-user-rate.ts";
import { admitRequest } from "../../auth/rate-limit.ts";
import { HttpError } from "../../errors.ts";
import type { DeploymentRecord } from "../../records/control.ts";
import type { RouterAuth } from "../runtime/custom-auth.ts";

// Who may call a deployment's agent server, decided by platform code (the AWS router, the local gateway) before
// a request reaches the deployment's runtime:
// - a platform API key of the deployment's workspace lets an operator in (the key is stripped: the runtime
//   never sees one). With custom auth (langgraph.json `auth.path`) the deployment's `on` handlers still see the
//   operator, as the reference's Studio user; with `auth.disable_studio_auth` the key counts for nothing and
//   the deployment's `authenticate` decides, as for anyone else.
// - without a valid platform key, a deployment with custom auth gets the request as it came (an app's end-user
//   token, in whatever header the app uses) less any platform key it carried (unknown, refused for its
//   X-Tenant-Id, of several workspaces), and its own `authenticate` decides; one without answers the refusal.
// A key of another workspace is that workspace's request: the deployment is not found there (404).
// A keyed request counts against the workspace's rate limit (429 beyond it); a keyless one to a custom-auth
// deployment counts in its end users' buckets (per client address, per deployment), never the owner's.

export interface AgentAccess {
  tenant: string;
  auth: RouterAuth;
  /** The headers the runtime gets. */
  headers: Record<string, string | undefined>;
  /**
   * Whether the request carried a platform key (the runtime never sees it): a client that follows a redirect sends
   * the key again, so the deployment's answer may not redirect it out of the deployment (answer-headers.ts).
   */
  keyCarried: boolean;
}

/** The headers less any platform key, and whether there was one. */
async function stripped(headers: Record<string, string | undefined>) {
  const out = await withoutPlatformKeys(headers);
  return { headers: out, keyCarried: Object.keys(out).length !== Object.keys(headers).length };
}

/** End users' buckets: one per process, as the workspaces' limiter is. */
const endUsers = new EndUserLimiter();

/**
 * `d`: the deployment the request names, as the edge read it by id (whatever its workspace), if there is one.
 * `client`: the caller's address as the gateway saw it (API Gateway's sourceIp), never a header it sent.
 */
export async function agentAccess(
  headers: Record<string, string | undefined>,
  d: DeploymentRecord | undefined,
  client: string,
): Promise<AgentAccess> {
  let tenant: string | undefined;
  let refused: HttpError | undefined;
  try {
    tenant = await authenticate(headers);
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    refused = err;
  }
  if (tenant !== undefined) {
    await admitRequest(tenant);
    const keyIgnored = d?.tenant_id === tenant && d.custom_auth?.disable_studio_auth === true;
    return { tenant, auth: keyIgnored ? "custom" : "operator", ...(await stripped(headers)) };
  }
  if (d?.custom_auth && d.active_revision_id) {
    await endUsers.admit(d.id, client);
    return { tenant: d.tenant_id, auth: "custom", ...(await stripped(headers)) };
  }
  throw refused!;
}
