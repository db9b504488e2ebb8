import { purgeDeploymentData } from "../../shared/agent/cleanup/purge.ts";
import { deploymentPurged, purgeFailed } from "../../shared/control/deployment-lifecycle.ts";
import { defineTask } from "../task-manifest.ts";

// Invoked asynchronously by a deployment's purge (DELETE /v2/deployments/{id}, or the sweeper resuming one): the
// agent server's data of the deleted deployment, the purge's last step, after which its tombstone is done. A
// failure is recorded on the tombstone (not thrown: Lambda's own retries of an async event would only repeat it).
export const handler = defineTask(
  "PurgeDeploymentData",
  async (event: { tenant_id: string; deployment_id: string }) => {
    try {
      const out = await purgeDeploymentData(event.tenant_id, event.deployment_id);
      await deploymentPurged(event.tenant_id, event.deployment_id);
      return out;
    } catch (err) {
      await purgeFailed(event.tenant_id, event.deployment_id, err);
      return { failed: (err as Error)?.name ?? "Error" };
    }
  },
);
