import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { Assistant, AssistantParams, AssistantPatchBody } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantPatchBody,
  response: Assistant,
  handle: ({ tenantId, params, body }) =>
    assistants.update(callerOf(tenantId), params.deployment_id, params.assistant_id, body),
});
