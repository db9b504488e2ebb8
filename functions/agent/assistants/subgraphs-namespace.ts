import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { AssistantParams, RecurseQuery } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, z } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams.extend({ namespace: z.string().min(1) }),
  query: RecurseQuery,
  handle: ({ tenantId, params, query }) =>
    assistants.subgraphs(
      callerOf(tenantId),
      params.deployment_id,
      params.assistant_id,
      params.namespace,
      query.recurse,
    ),
});
