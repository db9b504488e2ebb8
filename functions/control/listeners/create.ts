import { createListener, ListenerCreate, ListenerOut } from "../../../shared/control/listeners.ts";
import { defineHandler, reply } from "../../handler.ts";

// 201 as the established API answers; 409 when the workspace already has a listener for that compute_id.
export const handler = defineHandler({
  body: ListenerCreate,
  response: ListenerOut,
  handle: async ({ tenantId, body }) => reply(201, await createListener(tenantId, body)),
});
