import { z } from "zod";
import { listApiKeys } from "../../../shared/auth/api-keys.ts";
import { defineHandler } from "../../handler.ts";

// The workspace's live API keys: ids and first characters, never a key nor its digest.
const ApiKeyOut = z.object({
  id: z.string(),
  short_key: z.string(),
  description: z.string().nullable(),
  created_at: z.string(),
});

export const handler = defineHandler({
  response: z.array(ApiKeyOut),
  handle: ({ tenantId }) => listApiKeys(tenantId),
});
