import { lambdaRuntimes } from "../agent/hosting/lambda-host.ts";
import { staleRuntimes } from "../agent/hosting/layer-check.ts";
import { config } from "../config.ts";
import { logger } from "../log.ts";
import { type DeploymentRecord, deploymentById } from "../records/control.ts";
import { redeploy } from "./deployment-lifecycle.ts";

// After a platform upgrade (AWS), each deployment's runtime still runs the platform code it was deployed with.
// The control plane's sweeper redeploys the live revision of each one on an older runtime layer (its artifact
// again, no build); the deploys take their turns (RevisionDeploy's reserved concurrency).

/** Whether a stale runtime's deployment is redeployed: it has a live revision and no other in flight or failed. */
export const redeploysOnUpgrade = (
  d: DeploymentRecord | undefined,
): d is DeploymentRecord & { active_revision_id: string } =>
  Boolean(d?.active_revision_id && d.latest_revision_id === d.active_revision_id);

/** Redeploys the deployments whose runtime lacks the current layer; answers how many were started. */
export async function redeployStaleRuntimes(): Promise<number> {
  const layer = config.agent.runtimeLayerArn;
  if (!layer || !lambdaRuntimes()) return 0;
  let started = 0;
  for (const id of await staleRuntimes(layer)) {
    const d = await deploymentById(id);
    if (!redeploysOnUpgrade(d)) continue;
    try {
      await redeploy(d.tenant_id, d.id, d.active_revision_id);
      started++;
    } catch (err) {
      logger.warn("runtime upgrade: redeploy not started", { deployment_id: id, error: err });
    }
  }
  if (started) logger.info("runtimes on an older platform layer redeployed", { started });
  return started;
}
