import { createProvider, ProviderCreate, ProviderOut } from "../../../shared/oauth/providers.ts";
import { defineHandler } from "../../handler.ts";

// 200 as the established API answers; 409 when the workspace already has that provider_id.
export const handler = defineHandler({
  body: ProviderCreate,
  response: ProviderOut,
  handle: ({ tenantId, body }) => createProvider(tenantId, body),
});
