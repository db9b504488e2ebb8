import { describe, expect, it } from "vitest";
import type { PartitionJob } from "./exporter.ts";
import { ExportCreate } from "./exports.ts";
import { exportDays, maxExportDays } from "./workflow.ts";

const base = {
  bulk_export_destination_id: crypto.randomUUID(),
  session_id: crypto.randomUUID(),
  start_time: "2026-01-01T00:00:00Z",
  end_time: "2026-01-02T00:00:00Z",
};

describe("export create rules the workflow sets", () => {
  it("a repeated export field is a 422 issue at its index naming the field", () => {
    const r = ExportCreate.safeParse({ ...base, export_fields: ["id", "name", "id"] });
    expect(r.success).toBe(false);
    expect(r.error!.issues).toHaveLength(1);
    expect(r.error!.issues[0].path).toEqual(["export_fields", 2]);
    expect(r.error!.issues[0].message).toMatch(/id is repeated/);
    expect(ExportCreate.safeParse({ ...base, export_fields: ["id", "name"] }).success).toBe(true);
  });

  it("exportDays counts the UTC days the plan has a run for", () => {
    expect(exportDays("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")).toBe(1);
    expect(exportDays("2026-01-01T23:00:00Z", "2026-01-02T01:00:00Z")).toBe(2);
    expect(exportDays("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z")).toBe(365);
  });

  it("the plan of the most days an export may span fits Step Functions' 256 KB state, with room to spare", () => {
    const tenant = crypto.randomUUID();
    const max = maxExportDays(tenant);
    expect(max).toBeGreaterThan(365);
    const runs: PartitionJob[] = Array.from({ length: max }, () => ({
      tenant_id: tenant,
      export_id: crypto.randomUUID(),
      run_id: crypto.randomUUID(),
    }));
    const state = { tenant_id: tenant, export_id: runs[0].export_id, plan: { runs, max_concurrency: 45 } };
    expect(Buffer.byteLength(JSON.stringify(state))).toBeLessThanOrEqual(256 * 1024 - 32 * 1024);
    // A longer workspace id leaves room for fewer days.
    expect(maxExportDays("w".repeat(200))).toBeLessThan(max);
  });
});
