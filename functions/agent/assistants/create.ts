import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { Assistant, AssistantCreateBody, DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: DeploymentParams,
  body: AssistantCreateBody,
  response: Assistant,
  handle: ({ tenantId, params, body }) => assistants.create(callerOf(tenantId), params.deployment_id, body),
});
