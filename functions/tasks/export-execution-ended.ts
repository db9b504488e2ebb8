import { getExportRecord } from "../../shared/export/exports.ts";
import { finalize } from "../../shared/export/lifecycle.ts";
import { defineTask } from "../task-manifest.ts";

// "Step Functions Execution Status Change" for the bulk-export machine (an EventBridge rule in AWS, a hook
// locally): an execution that timed out, failed or was aborted without reaching its Finalize step still
// leaves the export with a final status and frees its slot.
interface Ended {
  detail: { executionArn: string; status: string; input?: string; cause?: string; error?: string };
}

export const handler = defineTask("ExportExecutionEnded", async (event: Ended) => {
  const { status, executionArn } = event.detail;
  if (status === "SUCCEEDED" || status === "RUNNING") return { ignored: status };
  const input = JSON.parse(event.detail.input ?? "{}") as { tenant_id?: string; export_id?: string };
  if (!input.tenant_id || !input.export_id) return { ignored: "input" };
  const exp = await getExportRecord(input.tenant_id, input.export_id);
  // A stale execution (the export was re-driven since) has nothing to say.
  if (!exp || exp.execution_arn !== executionArn) return { ignored: "stale" };
  const error = status === "TIMED_OUT" ? "States.Timeout" : (event.detail.error ?? status);
  return {
    status: await finalize(input.tenant_id, input.export_id, { Error: error, Cause: event.detail.cause }),
  };
});
