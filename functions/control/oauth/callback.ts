import { z } from "zod";
import { CallbackQuery, handleCallback } from "../../../shared/oauth/flow.ts";
import { defineHandler } from "../../handler.ts";

// No API key: the browser arrives from the provider, and the flow's single-use state authenticates it.
export const handler = defineHandler({
  params: z.object({ provider_id: z.string().min(1).max(256) }),
  query: CallbackQuery,
  response: z.object({ status: z.literal("completed"), auth_id: z.string(), message: z.string() }),
  handle: ({ params, query }) => handleCallback(params.provider_id, query),
});
