import { z } from "zod";
import { ListenerList, listListeners } from "../../../shared/control/listeners.ts";
import { qInt } from "../../../shared/http/query.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  query: z.looseObject({ limit: qInt(1, 100).optional(), offset: qInt(0, 1_000_000).optional() }),
  response: ListenerList,
  handle: ({ tenantId, query }) =>
    listListeners(tenantId, { limit: query.limit ?? 20, offset: query.offset ?? 0 }),
});
