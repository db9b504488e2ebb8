import { removeRuntime } from "../../shared/agent/hosting/lambda-host.ts";
import { defineTask } from "../task-manifest.ts";

// Invoked (and awaited) by a deployment's purge in AWS: deletes its runtime function and role. The one task
// besides RevisionDeploy that runs under the deploy role, the only role that may touch runtime functions and roles.
export const handler = defineTask("RuntimeRemove", async (event: { deployment_id: string }) => {
  await removeRuntime(event.deployment_id);
  return { removed: event.deployment_id };
});
