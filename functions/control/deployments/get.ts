import { z } from "zod";
import { DeploymentOut, getDeployment, toWire } from "../../../shared/control/deployments.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ deployment_id: z.uuid() }),
  response: DeploymentOut,
  handle: async ({ tenantId, params }) => toWire(await getDeployment(tenantId, params.deployment_id)),
});
