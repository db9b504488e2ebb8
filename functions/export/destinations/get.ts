import { z } from "zod";
import { DestinationOut } from "../../../shared/export/destination-schemas.ts";
import { getDestination } from "../../../shared/export/destinations.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ destination_id: z.uuid() }),
  response: DestinationOut,
  handle: ({ tenantId, params }) => getDestination(tenantId, params.destination_id),
});
