import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { type DeploymentRecord, recentDeploymentRecord, unsealSecrets } from "../control/deployments.ts";
import type { GraphInfo } from "../deploy/smoke.ts";
import { NotFound, ServiceUnavailable } from "../errors.ts";
import { DynamoCheckpointSaver } from "./checkpointer.ts";
import { DynamoStore } from "./store.ts";

// The deployment an agent-server request addresses (`/agents/{deployment_id}/…`): it must belong to the
// caller's workspace (else 404) and have a deployed revision (else 503). Everything the agent server stores
// is scoped by `<tenant>#<deployment>`, so deployments never see each other's assistants, threads or runs.
export interface AgentDeployment {
  tenant_id: string;
  deployment_id: string;
  /** `<tenant>#<deployment>`: the prefix of every key the agent server writes. */
  scope: string;
  revision_id: string;
  /** Where the built graphs are: an artifact prefix in S3, or a local folder (`npm start -- --graph`). */
  artifact_prefix?: string;
  artifact_dir?: string;
  graphs: GraphInfo[];
  tracing_project_id: string | null;
  secrets(): Promise<Record<string, string>>;
  checkpointer(): BaseCheckpointSaver;
  store(): BaseStore;
}

const savers = new Map<string, { checkpointer: BaseCheckpointSaver; store: BaseStore }>();
function durable(scope: string) {
  let s = savers.get(scope);
  if (!s) {
    s = { checkpointer: new DynamoCheckpointSaver({ scope }), store: new DynamoStore({ scope }) };
    savers.set(scope, s);
  }
  return s;
}

const locals = new Map<string, AgentDeployment>();

/** Serves graphs without a deployment record (local development: `npm start -- --graph langgraph.json`). */
export function registerLocalDeployment(d: Omit<AgentDeployment, "checkpointer" | "store" | "scope">): void {
  const scope = `${d.tenant_id}#${d.deployment_id}`;
  locals.set(d.deployment_id, {
    ...d,
    scope,
    checkpointer: () => durable(scope).checkpointer,
    store: () => durable(scope).store,
  });
}

export function fromRecord(d: DeploymentRecord): AgentDeployment {
  if (!d.active_revision_id) throw new ServiceUnavailable("The deployment has no deployed revision yet");
  const scope = `${d.tenant_id}#${d.id}`;
  return {
    tenant_id: d.tenant_id,
    deployment_id: d.id,
    scope,
    revision_id: d.active_revision_id,
    artifact_prefix: (d as DeploymentRecord & { active_artifact_prefix?: string }).active_artifact_prefix,
    graphs: (d.graphs ?? []) as GraphInfo[],
    tracing_project_id: d.tracing_project_id ?? null,
    secrets: () => unsealSecrets(d),
    checkpointer: () => durable(scope).checkpointer,
    store: () => durable(scope).store,
  };
}

export async function agentDeployment(tenantId: string, deploymentId: string): Promise<AgentDeployment> {
  const local = locals.get(deploymentId);
  if (local) {
    if (local.tenant_id !== tenantId) throw new NotFound("Deployment not found");
    return local;
  }
  const d = await recentDeploymentRecord(tenantId, deploymentId);
  if (!d) throw new NotFound("Deployment not found");
  return fromRecord(d);
}
