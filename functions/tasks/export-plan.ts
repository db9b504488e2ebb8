import { config } from "../../shared/config.ts";
import { openDestination } from "../../shared/export/destinations.ts";
import { exportPath } from "../../shared/export/exporter.ts";
import { getExport } from "../../shared/export/exports.ts";
import { ensureRun } from "../../shared/export/runs.ts";
import { canonicalTime } from "../../shared/runs/time.ts";
import { defineTask } from "../tasks.ts";

// Plan: one export run per UTC day in [start_time, end_time). Runs already planned are kept (a re-driven
// execution plans again and resumes each run from its checkpoint).
export const handler = defineTask("ExportPlan", async (input: { tenant_id: string; export_id: string }) => {
  const exp = await getExport(input.tenant_id, input.export_id);
  if (exp.status !== "Running") return { runs: [], max_concurrency: 1 };
  const { root } = await openDestination(input.tenant_id, exp.bulk_export_destination_id);
  const end = Date.parse(exp.end_time!);
  const runs: { tenant_id: string; export_id: string; run_id: string }[] = [];
  for (let day = Date.parse(exp.start_time.slice(0, 10)); day < end; day += 86_400_000) {
    const date = new Date(day).toISOString().slice(0, 10);
    const run_id = await ensureRun(input.tenant_id, exp.id, date, {
      start_time: canonicalTime(Math.max(day, Date.parse(exp.start_time)))!,
      end_time: canonicalTime(Math.min(day + 86_400_000, end))!,
      prefix: root,
      export_path: exportPath(root, exp, date),
    });
    runs.push({ tenant_id: input.tenant_id, export_id: exp.id, run_id });
  }
  return { runs, max_concurrency: Math.max(1, config.export.maxConcurrentRuns) };
});
