import { z } from "zod";
import { hasToken } from "../../shared/auth/oauth-tokens.ts";
import { defineHandler } from "../../shared/http/handler.ts";

export const handler = defineHandler({
  query: z.object({ provider_id: z.string().min(1) }),
  response: z.object({ has_token: z.boolean() }),
  handle: async ({ query, tenantId }) => ({ has_token: await hasToken(tenantId, query.provider_id) }),
});
