import { z } from "zod";
import { BulkExportOut, getExport, toWire } from "../../../shared/export/exports.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ export_id: z.uuid() }),
  response: BulkExportOut,
  handle: async ({ tenantId, params }) => toWire(await getExport(tenantId, params.export_id)),
});
