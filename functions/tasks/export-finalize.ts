import { type Failure, finalize } from "../../shared/export/lifecycle.ts";
import { defineTask } from "../task-manifest.ts";

// The state machine's last step: the export's final status from its runs (or the failure that ended it).
export const handler = defineTask(
  "ExportFinalize",
  async (input: { tenant_id: string; export_id: string; failure?: Failure }) => ({
    status: await finalize(input.tenant_id, input.export_id, input.failure),
  }),
);
