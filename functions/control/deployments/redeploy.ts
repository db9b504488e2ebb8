import { z } from "zod";
import { redeploy } from "../../../shared/control/deployment-lifecycle.ts";
import { DeploymentOut, toWire } from "../../../shared/control/deployments.ts";
import { defineHandler } from "../../handler.ts";

// Answers with the deployment, whose latest_revision_id is the new revision deploying that source again.
export const handler = defineHandler({
  params: z.object({ deployment_id: z.uuid(), revision_id: z.uuid() }),
  response: DeploymentOut,
  handle: async ({ tenantId, params }) =>
    toWire(await redeploy(tenantId, params.deployment_id, params.revision_id)),
});
