import { recentDeploymentRecord } from "../../records/control.ts";
import { lambdaRuntimeHost, lambdaRuntimes } from "./lambda-host.ts";
import type { RuntimeHost } from "./runtime-host.ts";

// The runtime host of a platform function (runtime-host.ts): a Lambda function per deployment (lambda-host.ts), in
// AWS and on the local cloud alike (whose Lambda service runs it: infra/local/runtimes.ts).

/** Each deployment's function, at the version its active revision published. */
const awsHost = (): RuntimeHost =>
  lambdaRuntimeHost(async (tenant, deployment) => {
    const d = await recentDeploymentRecord(tenant, deployment);
    return d?.active_runtime_version;
  });

/**
 * The runtime host of a platform function (none in a runtime: it never reaches another deployment): the deployments'
 * functions, which the deploy step is told about (PLATFORM_RUNTIME_SCOPE: set by the CDK app, and by the local cloud).
 */
export function runtimeHost(): RuntimeHost {
  if (lambdaRuntimes()) return awsHost();
  throw new Error("No runtime host: agent runtimes are reached from platform processes only");
}
