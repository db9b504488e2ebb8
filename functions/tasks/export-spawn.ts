import { spawnDue } from "../../shared/export/lifecycle.ts";
import { defineTask } from "../task-manifest.ts";

// Target of a scheduled export's one-time schedule: spawns the due windows, then schedules the next.
export const handler = defineTask("ExportSpawn", async (input: { tenant_id: string; export_id: string }) => ({
  spawned: await spawnDue(input.tenant_id, input.export_id),
}));
