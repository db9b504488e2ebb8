import { z } from "zod";
import { ExportRunOut, listExportRuns, runWire } from "../../../shared/export/export-runs.ts";
import { getExport } from "../../../shared/export/exports.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ export_id: z.uuid() }),
  response: z.array(ExportRunOut),
  handle: async ({ tenantId, params }) => {
    await getExport(tenantId, params.export_id);
    return (await listExportRuns(tenantId, params.export_id)).map(runWire);
  },
});
