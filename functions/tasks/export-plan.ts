import { planExport } from "../../shared/export/plan.ts";
import { defineTask } from "../task-manifest.ts";

// Plan: one export run per UTC day of the export (shared/export/plan.ts).
export const handler = defineTask("ExportPlan", (input: { tenant_id: string; export_id: string }) =>
  planExport(input.tenant_id, input.export_id),
);
