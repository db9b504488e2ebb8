import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  handle: ({ tenantId, params }) =>
    assistants.schemas(callerOf(tenantId), params.deployment_id, params.assistant_id),
});
