import { recentDeploymentRecord } from "../../records/control.ts";
import { lambdaRuntimeHost, lambdaRuntimes } from "./lambda-host.ts";

// How platform code reaches deployments' runtimes without importing their code: the local cloud runs a child
// process per deployment (infra/local/runtimes.ts), AWS a Lambda function per deployment (lambda-host.ts).
export interface RuntimeHost {
  /** Has the deployment's runtime start the thread's next due run (the run sweeper's retries, delayed runs). */
  kick(tenantId: string, deploymentId: string, threadId: string): Promise<void>;
  /** A new revision went live: its runtime takes over from the previous one. */
  activated(tenantId: string, deploymentId: string): Promise<void>;
  /** The deployment is deleted: its runtimes stop and go. */
  remove(tenantId: string, deploymentId: string): Promise<void>;
}

let host: RuntimeHost | undefined;

/** In AWS (the deploy step is told about per-deployment functions): each deployment's function version. */
const awsHost = () =>
  lambdaRuntimeHost(async (tenant, deployment) => {
    const d = await recentDeploymentRecord(tenant, deployment);
    return d?.active_runtime_version;
  });

export function setRuntimeHost(h: RuntimeHost): void {
  host = h;
}

/** The runtime host of this platform process (none in a runtime: it never reaches another deployment). */
export function runtimeHost(): RuntimeHost {
  if (!host && lambdaRuntimes()) host = awsHost();
  if (!host) throw new Error("No runtime host: agent runtimes are reached from platform processes only");
  return host;
}
