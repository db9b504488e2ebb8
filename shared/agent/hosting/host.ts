import { callLoopback, LOOPBACK_PATHS } from "../../aws/local-loopback.ts";
import { config } from "../../config.ts";
import { recentDeploymentRecord } from "../../records/control.ts";
import { lambdaRuntimeHost, lambdaRuntimes } from "./lambda-host.ts";
import type { RuntimeHost } from "./runtime-host.ts";

// The runtime host of a platform function (runtime-host.ts): AWS's Lambda functions, or the local cloud's runtimes.

/** In AWS (the deploy step is told about per-deployment functions): each deployment's function version. */
const awsHost = () =>
  lambdaRuntimeHost(async (tenant, deployment) => {
    const d = await recentDeploymentRecord(tenant, deployment);
    return d?.active_runtime_version;
  });

/** The operations of a runtime host, as the local cloud's loopback endpoint takes them. */
export const RUNTIME_HOST_OPS = ["kick", "activated", "remove"] as const;

/**
 * In a Lambda environment of the local cloud (a worker thread): the runtimes are the local cloud's child
 * processes, reached through its loopback endpoint as AWS's are reached through Lambda.
 */
const loopbackHost = (): RuntimeHost => {
  const call = (op: (typeof RUNTIME_HOST_OPS)[number], body: Record<string, string>) =>
    callLoopback(LOOPBACK_PATHS.runtimeHost, { op, ...body }).then(() => {});
  return {
    kick: (tenant_id, deployment_id, thread_id) => call("kick", { tenant_id, deployment_id, thread_id }),
    activated: (tenant_id, deployment_id) => call("activated", { tenant_id, deployment_id }),
    remove: (tenant_id, deployment_id) => call("remove", { tenant_id, deployment_id }),
  };
};

/**
 * The runtime host of a platform function (none in a runtime: it never reaches another deployment), as its
 * environment's settings name it: AWS's per-deployment functions (AGENT_RUNTIME_SCOPE, set by the CDK app), or the
 * local cloud's runtimes through its loopback endpoint (PLATFORM_LOOPBACK_URL, set for its Lambda environments).
 * The local cloud's own process hands its runtimes over itself (infra/local/main.ts → serveLocalGraphs).
 */
export function runtimeHost(): RuntimeHost {
  if (lambdaRuntimes()) return awsHost();
  if (config.localLoopback) return loopbackHost();
  throw new Error("No runtime host: agent runtimes are reached from platform processes only");
}
