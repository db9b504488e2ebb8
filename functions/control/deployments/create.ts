import { createAndLaunch } from "../../../shared/control/deployment-lifecycle.ts";
import { DeploymentCreate, DeploymentOut, toWire } from "../../../shared/control/deployments.ts";
import { defineHandler, reply } from "../../handler.ts";

// 201 with the deployment; latest_revision_id is its first revision, whose pipeline has started.
export const handler = defineHandler({
  body: DeploymentCreate,
  response: DeploymentOut,
  handle: async ({ tenantId, body }) => reply(201, toWire(await createAndLaunch(tenantId, body))),
});
