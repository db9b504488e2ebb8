import { z } from "zod";
import { ExportRunOut, getExportRun, runWire } from "../../../shared/export/export-runs.ts";
import { getExport } from "../../../shared/export/exports.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ export_id: z.uuid(), run_id: z.uuid() }),
  response: ExportRunOut,
  handle: async ({ tenantId, params }) => {
    await getExport(tenantId, params.export_id);
    return runWire(await getExportRun(tenantId, params.export_id, params.run_id));
  },
});
