import { recentDeploymentRecord } from "../../records/control.ts";
import { lambdaRuntimeHost } from "./lambda-host.ts";
import type { RuntimeHost } from "./runtime-host.ts";

// The runtime host of a platform process (runtime-host.ts): a Lambda function per deployment (lambda-host.ts), in
// AWS and on the local cloud alike (whose Lambda service runs it: infra/local/runtimes.ts). Built by the platform
// entry points that reach runtimes (the agent server of a platform process, the deploy and purge tasks); a
// runtime builds none: it never reaches another deployment.

/** Each deployment's function, at the version its active revision published. */
export const deploymentsHost = (): RuntimeHost =>
  lambdaRuntimeHost(async (tenant, deployment) => {
    const d = await recentDeploymentRecord(tenant, deployment);
    return d?.active_runtime_version;
  });
