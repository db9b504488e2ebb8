import { AssistantParams } from "../../../shared/agent/assistant-api.ts";
import { deleteAssistant } from "../../../shared/agent/assistants.ts";
import { authorizedAssistant } from "../../../shared/agent/auth-checks.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { defineHandler, reply, z } from "../../handler.ts";

export const handler = defineHandler({
  params: AssistantParams,
  // The SDK sends delete_threads; threads started from the assistant are kept (documented choice).
  query: z.object({ delete_threads: z.enum(["true", "false"]).optional() }),
  handle: async ({ tenantId, params }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    await authorizedAssistant(d, params.assistant_id, "delete");
    await deleteAssistant(d, params.assistant_id);
    return reply(204);
  },
});
