import { fail, type PipelineInput } from "../../shared/control/pipeline.ts";
import { revisions } from "../../shared/records/control.ts";
import { defineTask } from "../task-manifest.ts";

// "Step Functions Execution Status Change" for the revision machine: an execution that failed, timed out or
// was aborted before its revision reached a final status leaves the revision failed, with the reason.
interface Ended {
  detail: { executionArn: string; status: string; input?: string; cause?: string; error?: string };
}

export const handler = defineTask("RevisionExecutionEnded", async (event: Ended) => {
  const { status, executionArn } = event.detail;
  if (status === "SUCCEEDED" || status === "RUNNING") return { ignored: status };
  const input = JSON.parse(event.detail.input ?? "{}") as Partial<PipelineInput>;
  if (!input.tenant_id || !input.deployment_id || !input.revision_id) return { ignored: "input" };
  const r = await revisions.get({
    tenant: input.tenant_id,
    deployment: input.deployment_id,
    id: input.revision_id,
  });
  if (!r || r.execution_arn !== executionArn) return { ignored: "stale" };
  return fail(input as PipelineInput, event.detail.error ?? status, event.detail.cause);
});
