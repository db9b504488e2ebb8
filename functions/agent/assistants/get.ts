import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { Assistant, AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  response: Assistant,
  handle: ({ tenantId, params }) =>
    assistants.get(callerOf(tenantId), params.deployment_id, params.assistant_id),
});
