import { callerOf, runs } from "../../../shared/agent/ops/index.ts";
import { deploymentParams, runCreate } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply } from "../../handler.ts";

// POST /agents/{deployment_id}/runs/wait: a stateless run; answers its final values (newlines until
// then: shared/agent/stream/keep-alive.ts).
export const handler = defineHandler({
  params: deploymentParams,
  body: runCreate,
  handle: async ({ params, body, tenantId }) => {
    const out = await runs.createAndWait(callerOf(tenantId), params.deployment_id, null, body);
    return reply.stream(out.body, out.headers);
  },
});
