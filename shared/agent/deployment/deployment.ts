import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { GraphInfo } from "../../build/smoke.ts";
import { NotFound, ServiceUnavailable } from "../../errors.ts";
import type { RunRecord } from "../../records/agent.ts";
import { type DeploymentRecord, recentDeploymentRecord } from "../../records/control.ts";
import type { ingestBatch } from "../../runs/ingest.ts";
import type { RuntimeArtifact } from "../artifact/artifact.ts";
import { DynamoCheckpointSaver } from "../checkpoint/checkpointer.ts";
import { DynamoStore } from "../store/store.ts";
import type { ServesGraphs } from "./graphs.ts";

// The deployment an agent-server request addresses (`/agents/{deployment_id}/…`). Everything the agent server
// stores is scoped by `<tenant>#<deployment>`, so deployments never see each other's assistants, threads or runs.
// Two kinds of process hold one:
// - the deployment's own runtime (runtime/serve.ts) serves exactly one deployment; only it has `loadGraphs`,
//   so only it ever imports the deployment's code;
// - platform processes (the run sweeper, the purge) act on a deployment's records only: no graphs.
export interface AgentDeployment extends ServesGraphs {
  tenant_id: string;
  deployment_id: string;
  /** `<tenant>#<deployment>`: the prefix of every key the agent server writes. */
  scope: string;
  revision_id: string;
  graphs: GraphInfo[];
  tracing_project_id: string | null;
  checkpointer(): DynamoCheckpointSaver;
  store(): DynamoStore;
  /** What its runtime executes runs with, given by the runtime's entry point (runtime/serve.ts): only there. */
  runtime?: RuntimeServices;
}

/** The services a runtime's entry point hands the deployment it serves (AWS and local each their own). */
export interface RuntimeServices {
  /** Names this runtime's claims on runs (a crashed runtime's runs are retried at once). */
  workerId: string;
  /** The revision's artifact it serves (manifest, custom routes, UI, store index, TTLs). */
  artifact: RuntimeArtifact;
  /** Where its runs' traces go: the trace sink, through this runtime's transport (runtime/traces.ts). */
  traces: typeof ingestBatch;
  /**
   * How a finished run's webhook goes out (answers the failure's class, or undefined once delivered); absent:
   * sent from this process (AWS: the runtime function).
   */
  webhooks?: WebhookSender;
}

/** What a finished run's webhook carries beside the run: the values, and the error message when it failed. */
export interface WebhookOutcome {
  values: unknown;
  error?: string;
}

/**
 * How a finished run's webhook goes out (runs/webhook.ts): sent from this process (AWS: the runtime function), or
 * — from a sandboxed runtime — asked of the platform with the run's ids and outcome, which reads the run's record
 * and sends it (infra/local/runtimes.ts). Answers the failure's class, or undefined once delivered.
 */
export type WebhookSender = (run: RunRecord, outcome: WebhookOutcome) => Promise<string | undefined>;

export type DeploymentData = Omit<
  AgentDeployment,
  "checkpointer" | "store" | "scope" | "loadGraphs" | "runtime"
>;

const savers = new Map<string, { checkpointer: DynamoCheckpointSaver; store: DynamoStore }>();
function durable(scope: string, artifact: RuntimeArtifact | undefined) {
  let s = savers.get(scope);
  if (!s) {
    s = { checkpointer: new DynamoCheckpointSaver({ scope }), store: new DynamoStore({ scope, artifact }) };
    savers.set(scope, s);
  }
  return s;
}

/**
 * The records side of a deployment: its scope, checkpointer and store (in a runtime, a store that reads the
 * revision's index and TTLs from the artifact it serves).
 */
export function withStorage(d: DeploymentData, artifact?: RuntimeArtifact): AgentDeployment {
  const scope = `${d.tenant_id}#${d.deployment_id}`;
  return {
    ...d,
    scope,
    checkpointer: () => durable(scope, artifact).checkpointer,
    store: () => durable(scope, artifact).store,
  };
}

/** The saver and store graphs get attached (typed as LangGraph's, whichever copy the bundle brings). */
export const graphStorage = (d: AgentDeployment) => ({
  checkpointer: d.checkpointer() as BaseCheckpointSaver,
  store: d.store(),
});

export function fromRecord(d: DeploymentRecord): AgentDeployment {
  if (!d.active_revision_id) throw new ServiceUnavailable("The deployment has no deployed revision yet");
  return withStorage({
    tenant_id: d.tenant_id,
    deployment_id: d.id,
    revision_id: d.active_revision_id,
    graphs: (d.graphs ?? []) as GraphInfo[],
    tracing_project_id: d.tracing_project_id ?? null,
  });
}

/**
 * A deployment as its records say, for a platform process (a runtime serves only its own: ops/server.ts); another
 * workspace's is not found.
 */
export async function agentDeployment(tenantId: string, deploymentId: string): Promise<AgentDeployment> {
  const d = await recentDeploymentRecord(tenantId, deploymentId);
  if (!d) throw new NotFound("Deployment not found");
  return fromRecord(d);
}
