import { z } from "zod";
import { deleteProvider } from "../../../shared/oauth/providers.ts";
import { defineHandler } from "../../handler.ts";

// 200 with a message, as the established API (its SDK reads the body); the provider's tokens go with it.
export const handler = defineHandler({
  params: z.object({ provider_id: z.string().min(1).max(256) }),
  response: z.object({ message: z.string() }),
  handle: async ({ tenantId, params }) => {
    await deleteProvider(tenantId, params.provider_id);
    return { message: `OAuth provider '${params.provider_id}' deleted` };
  },
});
