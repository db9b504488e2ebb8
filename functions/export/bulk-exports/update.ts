import { z } from "zod";
import { BulkExportOut, toWire } from "../../../shared/export/exports.ts";
import { cancelExport } from "../../../shared/export/lifecycle.ts";
import { defineHandler } from "../../handler.ts";

// The one change an export accepts: {"status": "Cancelled"} (any case).
export const handler = defineHandler({
  params: z.object({ export_id: z.uuid() }),
  body: z.looseObject({
    status: z
      .string()
      .refine((s) => s.toLowerCase() === "cancelled", "Only status Cancelled can be set on a bulk export"),
  }),
  response: BulkExportOut,
  handle: async ({ tenantId, params }) => toWire(await cancelExport(tenantId, params.export_id)),
});
