import { z } from "zod";
import { deleteListener } from "../../../shared/control/listeners.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ listener_id: z.uuid() }),
  handle: async ({ tenantId, params }) => {
    await deleteListener(tenantId, params.listener_id);
    return reply(204);
  },
});
