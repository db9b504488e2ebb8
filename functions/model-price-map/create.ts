import { defineHandler } from "../../shared/http/handler.ts";
import { createPrice, PriceInput, StoredPrice } from "../../shared/llm/price-store.ts";

export const handler = defineHandler({
  body: PriceInput,
  response: StoredPrice,
  handle: ({ tenantId, body }) => createPrice(tenantId, body),
});
