import { z } from "zod";
import { BulkExportOut, listExports } from "../../../shared/export/exports.ts";
import { qInt } from "../../../shared/http/query.ts";
import { STATUSES } from "../../../shared/records/export.ts";
import { defineHandler, reply } from "../../handler.ts";

// Newest first, `limit` (default 100) from `offset`. The spec shows no pagination: when more exports follow,
// the answer says so in `X-Pagination-Next` (the offset to ask next), as the agent server's lists do. `status`
// takes any case, as PATCH does.
const STATUS_BY_LOWER = new Map(STATUSES.map((s) => [s.toLowerCase(), s] as const));

export const handler = defineHandler({
  query: z.looseObject({
    limit: qInt(1, 1000).optional(),
    offset: qInt(0, 1_000_000).optional(),
    status: z
      .string()
      .transform((s) => STATUS_BY_LOWER.get(s.toLowerCase()) ?? s)
      .pipe(z.enum(STATUSES))
      .optional(),
  }),
  response: z.array(BulkExportOut),
  handle: async ({ tenantId, query }) => {
    const limit = query.limit ?? 100;
    const offset = query.offset ?? 0;
    // One more than asked tells whether more exist.
    const found = await listExports(tenantId, { limit: limit + 1, offset, status: query.status });
    const more = found.length > limit;
    return reply(200, found.slice(0, limit), more ? { "x-pagination-next": String(offset + limit) } : {});
  },
});
