import { queryPages } from "../aws/ddb.ts";
import {
  ACTIVE_RUNS_PK,
  AGENT_INDEX,
  agentKeys,
  indexedAgentRecord,
  type RunRecord,
} from "../records/agent.ts";
import type { AgentDeployment } from "./context.ts";

// GET /metrics of an agent server: the reference server's run-queue gauges (lg_api_ names), read from the
// sparse index of active runs, in Prometheus text (the default) or as JSON.
export interface AgentMetrics {
  lg_api_num_pending_runs: number;
  lg_api_num_running_runs: number;
}

const HELP: Record<keyof AgentMetrics, string> = {
  lg_api_num_pending_runs: "Runs waiting to start (pending), delayed ones included.",
  lg_api_num_running_runs: "Runs executing now.",
};

/** The deployment's active runs by status (the index holds every deployment's: filtered to this one). */
export async function agentMetrics(d: AgentDeployment): Promise<AgentMetrics> {
  const out: AgentMetrics = { lg_api_num_pending_runs: 0, lg_api_num_running_runs: 0 };
  const prefix = agentKeys.runsPk(d.scope, "");
  for await (const page of queryPages<Pick<RunRecord, "PK" | "SK" | "thread_id" | "run_id" | "status">>(
    "main",
    {
      IndexName: AGENT_INDEX,
      KeyConditionExpression: "AGENT1PK = :pk",
      FilterExpression: "begins_with(PK, :prefix)",
      ProjectionExpression: "PK, SK, thread_id, run_id, #s",
      ExpressionAttributeNames: { "#s": "status" },
      values: { ":pk": ACTIVE_RUNS_PK, ":prefix": prefix },
    },
  ))
    for (const r of page) {
      if (!indexedAgentRecord(r, "run")) continue;
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
