import { z } from "zod";
import { getExport } from "../../shared/export/exports.ts";
import { ExportRunOut, listRuns, runWire } from "../../shared/export/runs.ts";
import { defineHandler } from "../handler.ts";

export const handler = defineHandler({
  params: z.object({ export_id: z.uuid() }),
  response: z.array(ExportRunOut),
  handle: async ({ tenantId, params }) => {
    await getExport(tenantId, params.export_id);
    return (await listRuns(tenantId, params.export_id)).map(runWire);
  },
});
