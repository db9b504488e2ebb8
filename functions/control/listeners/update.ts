import { z } from "zod";
import { ListenerOut, ListenerPatch, updateListener } from "../../../shared/control/listeners.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ listener_id: z.uuid() }),
  body: ListenerPatch,
  response: ListenerOut,
  handle: ({ tenantId, params, body }) => updateListener(tenantId, params.listener_id, body),
});
