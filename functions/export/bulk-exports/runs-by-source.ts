import { z } from "zod";
import { ExportRunOut, listExportRuns, runWire } from "../../../shared/export/export-runs.ts";
import { childrenOf, getExport } from "../../../shared/export/exports.ts";
import { defineHandler } from "../../handler.ts";

// The runs of every export a scheduled export spawned, in window order.
export const handler = defineHandler({
  query: z.looseObject({ source_bulk_export_id: z.uuid() }),
  response: z.array(ExportRunOut),
  handle: async ({ tenantId, query }) => {
    await getExport(tenantId, query.source_bulk_export_id);
    const out = [];
    for (const child of await childrenOf(tenantId, query.source_bulk_export_id))
      out.push(...(await listExportRuns(tenantId, child)).map(runWire));
    return out;
  },
});
