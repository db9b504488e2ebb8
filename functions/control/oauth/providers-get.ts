import { z } from "zod";
import { getProvider, ProviderOut } from "../../../shared/oauth/providers.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ provider_id: z.string().min(1).max(256) }),
  response: ProviderOut,
  handle: ({ tenantId, params }) => getProvider(tenantId, params.provider_id),
});
