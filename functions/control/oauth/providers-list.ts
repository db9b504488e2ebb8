import { z } from "zod";
import { listProviders, ProviderOut } from "../../../shared/oauth/providers.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  response: z.array(ProviderOut),
  handle: ({ tenantId }) => listProviders(tenantId),
});
