import { z } from "zod";
import { listPrices, StoredPrice } from "../../../shared/llm/price-store.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  response: z.array(StoredPrice),
  handle: ({ tenantId }) => listPrices(tenantId),
});
