import { z } from "zod";
import { qBool, qCsv, qInt } from "../../../shared/http/query.ts";
import { FeedbackConfigOut, listFeedbackConfigs } from "../../../shared/runs/feedback-configs.ts";
import { defineHandler } from "../../handler.ts";

// A repeated `key` arrives comma-joined. Deleted configs are not kept, so include_all_configs is refused.
export const handler = defineHandler({
  query: z.looseObject({
    key: qCsv()
      .pipe(z.array(z.string().max(180)).max(100))
      .optional(),
    name_contains: z.string().max(180).optional(),
    is_enforced: qBool().optional(),
    include_all_configs: qBool()
      .pipe(z.literal(false, { error: "deleted feedback configs are not kept here: leave it out" }))
      .optional(),
    limit: qInt(1, 100).optional(),
    offset: qInt(0, 10_000).optional(),
  }),
  response: z.array(FeedbackConfigOut),
  handle: ({ tenantId, query }) =>
    listFeedbackConfigs(tenantId, {
      keys: query.key,
      nameContains: query.name_contains,
      isEnforced: query.is_enforced,
      limit: query.limit ?? 100,
      offset: query.offset ?? 0,
    }),
});
