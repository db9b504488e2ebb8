import { assistants, callerOf } from "../../../shared/agent/ops/index.ts";
import { AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply, z } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  // The SDK sends delete_threads; threads started from the assistant are kept (documented choice).
  query: z.object({ delete_threads: z.enum(["true", "false"]).optional() }),
  handle: async ({ tenantId, params }) => {
    await assistants.remove(callerOf(tenantId), params.deployment_id, params.assistant_id);
    return reply(204);
  },
});
