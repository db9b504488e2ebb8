import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { AssistantParams, RecurseQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  query: RecurseQuery,
  handle: ({ tenantId, params, query }) =>
    assistants.subgraphs(
      callerOf(tenantId),
      params.deployment_id,
      params.assistant_id,
      undefined,
      query.recurse,
    ),
});
