import { z } from "zod";
import { defineHandler } from "../../shared/http/handler.ts";
import { listPrices, StoredPrice } from "../../shared/llm/price-store.ts";

export const handler = defineHandler({
  response: z.array(StoredPrice),
  handle: ({ tenantId }) => listPrices(tenantId),
});
