import { createPrice, PriceInput, StoredPrice } from "../../../shared/llm/price-store.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  body: PriceInput,
  response: StoredPrice,
  handle: ({ tenantId, body }) => createPrice(tenantId, body),
});
