import { z } from "zod";
import { deletePrice } from "../../../shared/llm/price-store.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ id: z.string().min(1).max(200) }),
  response: z.object({}),
  handle: async ({ tenantId, params }) => {
    await deletePrice(tenantId, params.id);
    return {};
  },
});
