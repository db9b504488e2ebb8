import { z } from "zod";
import { ListenerOut, requireListener } from "../../../shared/control/listeners.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ listener_id: z.uuid() }),
  response: ListenerOut,
  handle: ({ tenantId, params }) => requireListener(tenantId, params.listener_id),
});
