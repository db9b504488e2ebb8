import { agentDeployment } from "../../../shared/agent/context.ts";
import { runList, threadParams } from "../../../shared/agent/run-schemas.ts";
import { listRuns } from "../../../shared/agent/runs.ts";
import { defineHandler } from "../../handler.ts";

// GET /agents/{deployment_id}/threads/{thread_id}/runs: newest first.
export const handler = defineHandler({
  params: threadParams,
  query: runList,
  handle: async ({ params, query, tenantId }) =>
    listRuns(await agentDeployment(tenantId, params.deployment_id), params.thread_id, query),
});
