import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { AssistantCountBody, DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, z } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  body: AssistantCountBody,
  response: z.number().int(),
  handle: ({ tenantId, params, body }) => assistants.count(callerOf(tenantId), params.deployment_id, body),
});
