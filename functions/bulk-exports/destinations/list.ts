import { z } from "zod";
import { DestinationOut, listDestinations } from "../../../shared/export/destinations.ts";
import { defineHandler } from "../../../shared/http/handler.ts";

export const handler = defineHandler({
  response: z.array(DestinationOut),
  handle: ({ tenantId }) => listDestinations(tenantId),
});
