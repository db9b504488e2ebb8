import { z } from "zod";
import { ProviderOut, ProviderPatch, updateProvider } from "../../../shared/oauth/providers.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ provider_id: z.string().min(1).max(256) }),
  body: ProviderPatch,
  response: ProviderOut,
  handle: ({ tenantId, params, body }) => updateProvider(tenantId, params.provider_id, body),
});
