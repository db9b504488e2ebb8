import { z } from "zod";
import { updateAndLaunch } from "../../../shared/control/deployment-lifecycle.ts";
import { DeploymentOut, DeploymentPatch, toWire } from "../../../shared/control/deployments.ts";
import { defineHandler } from "../../handler.ts";

// source_config fields merge, secrets are replaced, and a source_revision_config starts a new revision.
export const handler = defineHandler({
  params: z.object({ deployment_id: z.uuid() }),
  body: DeploymentPatch,
  response: DeploymentOut,
  handle: async ({ tenantId, params, body }) =>
    toWire(await updateAndLaunch(tenantId, params.deployment_id, body)),
});
