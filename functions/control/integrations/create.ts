import {
  createIntegration,
  IntegrationCreate,
  IntegrationOut,
} from "../../../shared/control/integrations.ts";
import { defineHandler } from "../../handler.ts";

// 200 with the integration (like destinations, the other write-only-secret resource); never the token.
export const handler = defineHandler({
  body: IntegrationCreate,
  response: IntegrationOut,
  handle: ({ tenantId, body }) => createIntegration(tenantId, body),
});
