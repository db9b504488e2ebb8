import { z } from "zod";
import { revokeWorkspaceKey } from "../../../shared/auth/api-keys.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ api_key_id: z.uuid() }),
  handle: async ({ tenantId, params }) => {
    await revokeWorkspaceKey(tenantId, params.api_key_id);
    return reply(204);
  },
});
