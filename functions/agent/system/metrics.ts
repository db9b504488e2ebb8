import { callerOf } from "../../../shared/agent/ops/index.ts";
import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply, z } from "../../handler.ts";
import { platformAgentServer } from "../platform.ts";

// GET /agents/{deployment_id}/metrics: the agent server's run-queue gauges, Prometheus text by default.
export const handler = defineHandler({
  params: DeploymentParams,
  query: z.object({ format: z.enum(["prometheus", "json"]).default("prometheus") }),
  handle: async ({ tenantId, params, query }) => {
    const m = await platformAgentServer.system.metrics(
      callerOf(tenantId),
      params.deployment_id,
      query.format,
    );
    if (typeof m !== "string") return m;
    return reply(200, m, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  },
});
