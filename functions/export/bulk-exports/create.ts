import {
  BulkExportOut,
  ExportCreate,
  getExport,
  putExport,
  toWire,
  validateCreate,
} from "../../../shared/export/exports.ts";
import { launchQueued, spawnDue } from "../../../shared/export/lifecycle.ts";
import { defineHandler } from "../../handler.ts";

// A one-off export is queued and started when a running slot of the workspace is free; a scheduled one
// (interval_hours) spawns its windows as they come due, those already past at once and in order.
export const handler = defineHandler({
  body: ExportCreate,
  response: BulkExportOut,
  handle: async ({ tenantId, body }) => {
    await validateCreate(tenantId, body);
    const record = await putExport(tenantId, body);
    if (record.status === "IntervalScheduled") await spawnDue(tenantId, record.id);
    else await launchQueued(tenantId);
    return toWire(await getExport(tenantId, record.id));
  },
});
