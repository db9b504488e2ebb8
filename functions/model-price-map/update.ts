import { z } from "zod";
import { defineHandler } from "../../shared/http/handler.ts";
import { PriceInput, StoredPrice, updatePrice } from "../../shared/llm/price-store.ts";

export const handler = defineHandler({
  params: z.object({ id: z.string().min(1).max(200) }),
  body: PriceInput,
  response: StoredPrice,
  handle: ({ tenantId, params, body }) => updatePrice(tenantId, params.id, body),
});
