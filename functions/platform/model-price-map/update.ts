import { z } from "zod";
import { PriceInput, StoredPrice, updatePrice } from "../../../shared/llm/price-store.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ id: z.string().min(1).max(200) }),
  body: PriceInput,
  response: StoredPrice,
  handle: ({ tenantId, params, body }) => updatePrice(tenantId, params.id, body),
});
