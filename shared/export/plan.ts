import type { ExportRecord } from "../records/export.ts";
import { canonicalTime } from "../time.ts";
import { destinationRoot } from "./destination-client.ts";
import { getDestination } from "./destinations.ts";
import { ensureRun } from "./export-runs.ts";
import type { PartitionJob } from "./exporter.ts";
import { getExport } from "./exports.ts";
import { runConcurrency } from "./workflow.ts";

// Planning an export: one export run per UTC day in [start_time, end_time), each with its time window and
// the directory its files go to. Runs already planned are kept (a re-driven execution plans again and
// resumes each run from its checkpoint).

/** Hive-style directory of a day (spec B "Output layout"; v2_beta has resource=runs in place of runs). */
export function exportPath(
  root: string,
  exp: Pick<ExportRecord, "id" | "tenant_id" | "session_id" | "format_version">,
  day: string,
) {
  const [y, m, d] = day.split("-");
  const dir = [
    root,
    `export_id=${exp.id}`,
    `tenant_id=${exp.tenant_id}`,
    `session_id=${exp.session_id}`,
    exp.format_version === "v2_beta" ? "resource=runs" : "runs",
    `year=${y}`,
    `month=${m}`,
    `day=${d}`,
  ];
  return dir.filter(Boolean).join("/");
}

/** The state machine's plan: the runs to export (its Map's items) and how many may run at once. */
export interface ExportPlan {
  runs: PartitionJob[];
  max_concurrency: number;
}

/** Plans a running export (an export in any other status gets no runs). */
export async function planExport(tenant: string, exportId: string): Promise<ExportPlan> {
  const exp = await getExport(tenant, exportId);
  if (exp.status !== "Running") return { runs: [], max_concurrency: 1 };
  const root = destinationRoot((await getDestination(tenant, exp.bulk_export_destination_id)).config);
  const end = Date.parse(exp.end_time!);
  const runs: PartitionJob[] = [];
  for (let day = Date.parse(exp.start_time.slice(0, 10)); day < end; day += 86_400_000) {
    const date = new Date(day).toISOString().slice(0, 10);
    const run_id = await ensureRun(tenant, exp.id, date, {
      start_time: canonicalTime(Math.max(day, Date.parse(exp.start_time)))!,
      end_time: canonicalTime(Math.min(day + 86_400_000, end))!,
      prefix: root,
      export_path: exportPath(root, exp, date),
    });
    runs.push({ tenant_id: tenant, export_id: exp.id, run_id });
  }
  return { runs, max_concurrency: runConcurrency() };
}
