import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { Assistant, AssistantLatestBody, AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantLatestBody,
  response: Assistant,
  handle: ({ tenantId, params, body }) =>
    assistants.setLatest(callerOf(tenantId), params.deployment_id, params.assistant_id, body.version),
});
