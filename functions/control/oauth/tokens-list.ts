import { z } from "zod";
import { listTokens, TokenOut } from "../../../shared/oauth/tokens.ts";
import { defineHandler } from "../../handler.ts";

// Metadata only: token values never leave through a listing.
export const handler = defineHandler({
  query: z.looseObject({
    provider_id: z.string().min(1).max(256).optional(),
    user_id: z.string().max(256).optional(),
  }),
  response: z.array(TokenOut),
  handle: ({ tenantId, query }) => listTokens(tenantId, query),
});
