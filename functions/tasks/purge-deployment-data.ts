import { purgeDeploymentData } from "../../shared/agent/purge.ts";
import { deploymentPurged } from "../../shared/control/deployment-lifecycle.ts";
import { defineTask } from "../task-manifest.ts";

// Invoked asynchronously by a deployment's purge (DELETE /v2/deployments/{id}, or the sweeper resuming one): the
// agent server's data of the deleted deployment, the purge's last step, after which its tombstone is done.
export const handler = defineTask(
  "PurgeDeploymentData",
  async (event: { tenant_id: string; deployment_id: string }) => {
    const out = await purgeDeploymentData(event.tenant_id, event.deployment_id);
    await deploymentPurged(event.tenant_id, event.deployment_id);
    return out;
  },
);
