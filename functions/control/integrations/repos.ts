import { z } from "zod";
import { integrationRepositories, RepositoryOut } from "../../../shared/control/integrations.ts";
import { defineHandler } from "../../handler.ts";

// The API host's failures answer 502 with what went wrong; an unknown integration is a 404.
export const handler = defineHandler({
  params: z.object({ integration_id: z.uuid() }),
  response: z.array(RepositoryOut),
  handle: ({ tenantId, params }) => integrationRepositories(tenantId, params.integration_id),
});
