import { z } from "zod";
import { getRevision, RevisionLogsOut, readLog } from "../../../shared/control/revisions.ts";
import { defineHandler } from "../../handler.ts";

// The build and deploy logs as text (each line time-stamped); empty until that phase has started.
export const handler = defineHandler({
  params: z.object({ deployment_id: z.uuid(), revision_id: z.uuid() }),
  response: RevisionLogsOut,
  handle: async ({ tenantId, params }) => {
    const r = await getRevision(tenantId, params.deployment_id, params.revision_id);
    const [build_log, deploy_log] = await Promise.all([readLog(r, "build"), readLog(r, "deploy")]);
    return { revision_id: r.id, status: r.status, build_log, deploy_log };
  },
});
