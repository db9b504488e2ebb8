import { z } from "zod";
import { deleteToken } from "../../../shared/oauth/tokens.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ token_id: z.uuid() }),
  handle: async ({ tenantId, params }) => {
    await deleteToken(tenantId, params.token_id);
    return reply(204);
  },
});
