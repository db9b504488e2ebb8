import { DestinationCreate, DestinationOut } from "../../../shared/export/destination-schemas.ts";
import { createDestination } from "../../../shared/export/destinations.ts";
import { defineHandler } from "../../handler.ts";

// Answers 200 with the destination (credentials_keys names the stored fields; values are never returned).
export const handler = defineHandler({
  body: DestinationCreate,
  response: DestinationOut,
  handle: ({ tenantId, body }) => createDestination(tenantId, body),
});
