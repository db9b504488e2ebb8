import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { AssistantParams, XrayQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  query: XrayQuery,
  handle: ({ tenantId, params, query }) =>
    assistants.graph(callerOf(tenantId), params.deployment_id, params.assistant_id, query.xray),
});
