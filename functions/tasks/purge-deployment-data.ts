import { purgeDeploymentData } from "../../shared/agent/purge.ts";
import { defineTask } from "../task-manifest.ts";

// Invoked asynchronously by DELETE /v2/deployments/{id}: the agent server's data of the deleted deployment.
export const handler = defineTask(
  "PurgeDeploymentData",
  (event: { tenant_id: string; deployment_id: string }) =>
    purgeDeploymentData(event.tenant_id, event.deployment_id),
);
