import { z } from "zod";
import { defineHandler } from "../handler.ts";

export const handler = defineHandler({
  response: z.object({ ok: z.literal(true) }),
  handle: () => ({ ok: true }),
});
