import { z } from "zod";
import { IntegrationOut, IntegrationPatch, updateIntegration } from "../../../shared/control/integrations.ts";
import { defineHandler } from "../../handler.ts";

// A new name or webhook secret (null removes the secret); the secret is write-only like the token.
export const handler = defineHandler({
  params: z.object({ integration_id: z.uuid() }),
  body: IntegrationPatch,
  response: IntegrationOut,
  handle: ({ tenantId, params, body }) => updateIntegration(tenantId, params.integration_id, body),
});
