import { z } from "zod";
import { InstallationOut, listIntegrations } from "../../../shared/control/integrations.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  response: z.array(InstallationOut),
  handle: async ({ tenantId }) =>
    (await listIntegrations(tenantId)).map(({ id, installation_id, name }) => ({
      id,
      installation_id,
      name,
    })),
});
