import { DeploymentParams } from "../../../shared/agent/assistant-api.ts";
import { agentDeployment } from "../../../shared/agent/context.ts";
import { agentMetrics, prometheusText } from "../../../shared/agent/metrics.ts";
import { defineHandler, reply, z } from "../../handler.ts";

// GET /agents/{deployment_id}/metrics: the agent server's run-queue gauges, Prometheus text by default.
export const handler = defineHandler({
  params: DeploymentParams,
  query: z.object({ format: z.enum(["prometheus", "json"]).default("prometheus") }),
  handle: async ({ tenantId, params, query }) => {
    const d = await agentDeployment(tenantId, params.deployment_id);
    const m = await agentMetrics(d);
    if (query.format === "json") return m;
    return reply(200, prometheusText(m, params.deployment_id), {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    });
  },
});
