import { ACTIVE_RUNS, AGENT_INDEX, indexedAgentRecord, type RunRecord } from "../../records/agent.ts";
import { queryShards } from "../../records/shard.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";

// GET /metrics of an agent server: the reference server's run-queue gauges (lg_api_ names), read from the
// sparse index of active runs, in Prometheus text (the default) or as JSON. Platform code answers it (the
// index holds every deployment's runs, which a runtime's role may not read: functions/routes.ts).
export interface AgentMetrics {
  lg_api_num_pending_runs: number;
  lg_api_num_running_runs: number;
}

const HELP: Record<keyof AgentMetrics, string> = {
  lg_api_num_pending_runs: "Runs waiting to start (pending), delayed ones included.",
  lg_api_num_running_runs: "Runs executing now.",
};

/** The deployment's active runs by status: its entries in each shard (their sort keys start with its scope). */
export async function agentMetrics(d: AgentDeployment): Promise<AgentMetrics> {
  const out: AgentMetrics = { lg_api_num_pending_runs: 0, lg_api_num_running_runs: 0 };
  const entries = await queryShards<Pick<RunRecord, "PK" | "SK" | "thread_id" | "run_id" | "status">>(
    "main",
    ACTIVE_RUNS,
    {
      IndexName: AGENT_INDEX,
      KeyConditionExpression: "AGENT1PK = :pk AND begins_with(AGENT1SK, :scope)",
      ProjectionExpression: "PK, SK, thread_id, run_id, #s",
      ExpressionAttributeNames: { "#s": "status" },
      values: { ":scope": `${d.scope}#` },
    },
  );
  for (const r of entries) {
    const ids = indexedAgentRecord(r, "run");
    if (!ids || `${ids.tenant}#${ids.deployment}` !== d.scope) continue;
    if (r.status === "pending") out.lg_api_num_pending_runs++;
    else if (r.status === "running") out.lg_api_num_running_runs++;
  }
  return out;
}

/** The Prometheus text exposition of the metrics, labelled with the deployment. */
export function prometheusText(m: AgentMetrics, deploymentId: string): string {
  const label = `{deployment_id="${deploymentId.replace(/["\\\n]/g, "")}"}`;
  return (Object.keys(m) as (keyof AgentMetrics)[])
    .map((name) => `# HELP ${name} ${HELP[name]}\n# TYPE ${name} gauge\n${name}${label} ${m[name]}\n`)
    .join("");
}
