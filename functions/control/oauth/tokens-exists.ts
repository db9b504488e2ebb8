import { z } from "zod";
import { hasToken } from "../../../shared/oauth/tokens.ts";
import { defineHandler } from "../../handler.ts";

// True only for a token that still works: not expired, or renewable with its refresh token.
export const handler = defineHandler({
  query: z.looseObject({ provider_id: z.string().min(1).max(256), user_id: z.string().max(256).optional() }),
  response: z.object({ has_token: z.boolean() }),
  handle: async ({ query, tenantId }) => ({
    has_token: await hasToken(tenantId, query.provider_id, query.user_id),
  }),
});
