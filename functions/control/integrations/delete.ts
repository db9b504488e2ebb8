import { z } from "zod";
import { deleteIntegration } from "../../../shared/control/integrations.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ integration_id: z.uuid() }),
  handle: async ({ tenantId, params }) => {
    await deleteIntegration(tenantId, params.integration_id);
    return reply(204);
  },
});
