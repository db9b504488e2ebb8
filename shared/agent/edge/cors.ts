import { type CorsPolicy, corsPolicy, DEFAULT_CORS } from "../../http/cors.ts";
import { type CorsConfig, type DeploymentRecord, recentDeploymentById } from "../../records/control.ts";

// The CORS policy of a deployment's agent server: its live revision's langgraph.json `http.cors`, or the reference
// defaults. The edge reads the deployment once per request and hands the policy to the CORS toolkit
// (shared/http/cors.ts), which reads no records itself.

const compiled = new WeakMap<CorsConfig, CorsPolicy>();

/**
 * The policy of a deployment as the edge read it (none: the defaults, so a preflight tells nothing about which
 * ids exist beyond what a custom policy shows).
 */
export function deploymentCors(d: Pick<DeploymentRecord, "cors"> | undefined): CorsPolicy {
  const cors = d?.cors;
  if (!cors) return DEFAULT_CORS;
  // The record read within the last second is the same object on every request: its policy (a compiled
  // origin regex) is built once per read, not per request.
  let policy = compiled.get(cors);
  if (!policy) {
    policy = corsPolicy(cors);
    compiled.set(cors, policy);
  }
  return policy;
}

/**
 * Reads the deployment an agent-server request names, by id whatever its workspace (a preflight names no key and
 * no workspace), for its CORS policy alone: the answers the edge gives without the router (the local gateway's,
 * the AWS functions of an agent server's public routes).
 */
export const deploymentCorsPolicy = async (deploymentId: string): Promise<CorsPolicy> =>
  deploymentCors(await recentDeploymentById(deploymentId));
