import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { Assistant, AssistantParams, AssistantVersionsBody } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, z } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  body: AssistantVersionsBody,
  response: z.array(Assistant.omit({ updated_at: true })),
  handle: ({ tenantId, params, body }) =>
    assistants.versions(callerOf(tenantId), params.deployment_id, params.assistant_id, body),
});
