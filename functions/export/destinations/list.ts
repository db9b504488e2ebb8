import { z } from "zod";
import { DestinationOut } from "../../../shared/export/destination-schemas.ts";
import { listDestinations } from "../../../shared/export/destinations.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  response: z.array(DestinationOut),
  handle: ({ tenantId }) => listDestinations(tenantId),
});
