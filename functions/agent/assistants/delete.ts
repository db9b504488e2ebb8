import { AssistantParams } from "../../../shared/agent/ops/schemas.ts";
import { defineAgentHandler, reply, z } from "../handler.ts";

export const handler = defineAgentHandler({
  params: AssistantParams,
  // The SDK sends delete_threads; threads started from the assistant are kept (documented choice).
  query: z.object({ delete_threads: z.enum(["true", "false"]).optional() }),
  handle: async ({ params, server, caller }) => {
    await server.assistants.remove(caller, params.deployment_id, params.assistant_id);
    return reply(204);
  },
});
