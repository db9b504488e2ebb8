import { repository } from "../aws/repository.ts";
import type { Sealed } from "../crypto/envelope.ts";
import type { CorsOptions } from "../http/cors.ts";
import { recentReads } from "../recent.ts";
import { type ShardedKey, shardKey } from "./shard.ts";

/** One graph of a revision as its smoke test found it (shared/build/smoke.ts). */
export interface GraphInfo {
  graph_id: string;
  export_name: string;
  nodes: string[];
  /** Why the graph failed to load ("import failed: …"); its nodes are then empty. */
  error?: string;
}

/** langgraph.json `http.cors` as a revision stores it, after shared/build/graph-config.ts (CorsConfigSchema) has
 * validated it: the reference server's CorsConfig, in the CORS toolkit's shape. */
export type CorsConfig = CorsOptions;

// The control plane's records (main table), each with its repository. The deployment record sits below both
// the control plane (which writes it) and the agent server (which routes by it), so neither imports the other
// for it.
//   deployment   PK T#<tenant>#DEPLOYMENT             SK <id>          GSI1 DEPLOYMENT#<id> / DEPLOYMENT
//   name         PK T#<tenant>#DEPLOYMENTNAME         SK <name>        (names are unique per workspace)
//   purge        PK DEPLOYMENT_PURGES                 SK <tenant>#<id> a deleted deployment's cleanup: written in
//                                                                      the transaction that deletes its record,
//                                                                      done when every part is gone (kept a day,
//                                                                      so a retried DELETE answers 204)
//   revision     PK T#<tenant>#DEPLOYMENT#<deployment> SK REV#<uuidv7> GSI1 REVISIONS#INFLIGHT#<shard> / <id> while
//                                                                      not terminal (a sweeper finds them)
//   listener     PK T#<tenant>#LISTENER               SK <id>
//   compute id   PK T#<tenant>#LISTENERCOMPUTE        SK <compute_id>  (compute ids are unique per workspace)
//   integration  PK T#<tenant>#INTEGRATION            SK <id>          GSI1 INTEGRATION#<id> / INTEGRATION (the
//                                                                      webhook receiver finds it by id alone)
//   delivery     PK T#<tenant>#INTEGRATION#<id>#DELIVERY SK <GUID>   a GitHub webhook delivery seen (TTL 7 days:
//                                                                      a replayed delivery does nothing)

export const DEPLOYMENT_STATUSES = [
  "AWAITING_DATABASE",
  "READY",
  "UNUSED",
  "AWAITING_DELETE",
  "UNKNOWN",
] as const;

/** The source config as stored: the known fields, and any other a client sent (kept and shown back). */
export interface StoredSourceConfig {
  integration_id?: string | null;
  repo_url?: string | null;
  deployment_type?: "dev" | "prod" | null;
  build_on_push?: boolean | null;
  custom_url?: string | null;
  resource_spec?: Record<string, unknown> | null;
  listener_id?: string | null;
  listener_config?: { k8s_namespace?: string | null; [k: string]: unknown } | null;
  [k: string]: unknown;
}

export interface RevisionConfig {
  repo_ref: string | null;
  graph_config_path: string;
  image_uri: string | null;
}

export interface DeploymentRecord {
  id: string;
  tenant_id: string;
  name: string;
  source: string;
  source_config: StoredSourceConfig;
  source_revision_config: RevisionConfig;
  secret_names: string[];
  secrets_sealed?: Sealed;
  latest_revision_id: string;
  active_revision_id?: string | null;
  status: (typeof DEPLOYMENT_STATUSES)[number];
  tracing_project_id?: string | null;
  graphs?: unknown[];
  /** The live revision's artifact (written when it goes live, with `active_revision_id`). */
  active_artifact_prefix?: string;
  /** AWS: the runtime function version the router invokes, switched with the active revision. */
  active_runtime_version?: string;
  /** The live revision's langgraph.json `http.cors` (null or absent: the defaults), switched with it. */
  cors?: CorsConfig | null;
  /**
   * The live revision's custom auth (langgraph.json `auth.path`), switched with it: requests without a platform
   * API key go to the deployment's own `authenticate`. Null or absent: none.
   */
  custom_auth?: { disable_studio_auth: boolean } | null;
  created_at: string;
  updated_at: string;
}

export const deploymentKeys = {
  pk: (tenant: string) => `T#${tenant}#DEPLOYMENT`,
  namePk: (tenant: string) => `T#${tenant}#DEPLOYMENTNAME`,
  byIdPk: (id: string) => `DEPLOYMENT#${id}`,
};

export const deployments = repository<DeploymentRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: deploymentKeys.pk(tenant), SK: id }),
  keysOf: (d) => ({
    PK: deploymentKeys.pk(d.tenant_id),
    SK: d.id,
    GSI1PK: deploymentKeys.byIdPk(d.id),
    GSI1SK: "DEPLOYMENT",
  }),
});

/** A deployment's name, held so that two deployments of a workspace cannot share one. */
export interface DeploymentNameRecord {
  tenant: string;
  name: string;
  deployment_id: string;
}
export const deploymentNames = repository<DeploymentNameRecord, { tenant: string; name: string }>({
  table: "main",
  key: ({ tenant, name }) => ({ PK: deploymentKeys.namePk(tenant), SK: name }),
  keysOf: (n) => ({ PK: deploymentKeys.namePk(n.tenant), SK: n.name }),
});

/** A deleted deployment whose cleanup is under way (or done, for a day): the tombstone of DELETE. */
export interface DeploymentPurgeRecord {
  tenant_id: string;
  deployment_id: string;
  tracing_project_id: string | null;
  delete_tracing_project: boolean;
  created_at: string;
  /** When the sweeper last resumed it. */
  resumed_at?: string;
  /** When the last part went: set by the agent data purge, the cleanup's last step. */
  done_at?: string;
  /** Attempts that failed, and why the last one did. */
  attempts?: number;
  error?: string;
  /** When the purge was given up (a denied call, or too many attempts): the sweeper resumes it no more. */
  failed_at?: string;
  /** Epoch seconds: DynamoDB's TTL removes a done tombstone. */
  expires_at?: number;
}

export const DEPLOYMENT_PURGES_PK = "DEPLOYMENT_PURGES";
export const deploymentPurges = repository<DeploymentPurgeRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: DEPLOYMENT_PURGES_PK, SK: `${tenant}#${id}` }),
  keysOf: (p) => ({ PK: DEPLOYMENT_PURGES_PK, SK: `${p.tenant_id}#${p.deployment_id}` }),
});

// Agent-server calls read their deployment on every request. A record read within the last second serves
// them (at most a second stale in another process; this process forgets it when it changes the record). One
// with no deployed revision yet is read again each time: a client told DEPLOYED calls at once, and a copy read
// during the build would answer it 503 for up to a second.
const deployed = { keep: (d: DeploymentRecord) => Boolean(d.active_revision_id) };
const recent = recentReads((key: string) => {
  const at = key.indexOf("#");
  return deployments.get({ tenant: key.slice(0, at), id: key.slice(at + 1) });
}, deployed);

/** The deployment record as read at most a second ago (routing of agent-server calls). */
export const recentDeploymentRecord = (tenant: string, id: string): Promise<DeploymentRecord | undefined> =>
  tooLongForKey(id) ? Promise.resolve(undefined) : recent.get(`${tenant}#${id}`);

/** No deployment has an id past DynamoDB's key size (DynamoDB would refuse the read itself). */
const tooLongForKey = (id: string) => Buffer.byteLength(id) > 1024;

/** Drops this process's recent copy of a deployment record it just changed. */
export function forgetDeploymentRecord(tenant: string, id: string): void {
  recent.forget(`${tenant}#${id}`);
}

const recentById = recentReads(deploymentById, deployed);

/** The deployment an agent-server path names, whatever its tenant, as read at most a second ago (routing only). */
export const recentDeploymentById = (id: string): Promise<DeploymentRecord | undefined> =>
  id ? recentById.get(id) : Promise.resolve(undefined);

/**
 * The deployment an agent-server path names, whatever its tenant (routing only): the item of the by-id index
 * that is a deployment record (`T#<tenant>#DEPLOYMENT` / `<id>`) of that id, never another item carrying its keys.
 */
export async function deploymentById(id: string): Promise<DeploymentRecord | undefined> {
  if (tooLongForKey(id)) return undefined;
  for await (const items of deployments.indexPages({
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk",
    values: { ":pk": deploymentKeys.byIdPk(id) },
  })) {
    const found = items.find((d) => d.id === id);
    if (found) return found;
  }
  return undefined;
}

// — revisions —

export const REVISION_STATUSES = [
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "DEPLOYED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];
export const TERMINAL: readonly RevisionStatus[] = [
  "DEPLOYED",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
];
/** The GSI1 partition of revisions whose pipeline has not ended (every tenant's: sharded by revision id). */
export const REVISIONS_INFLIGHT: ShardedKey = { base: "REVISIONS#INFLIGHT", shards: 8 };

export interface RevisionRecord {
  id: string;
  deployment_id: string;
  tenant_id: string;
  status: RevisionStatus;
  source: string;
  source_revision_config: RevisionConfig;
  status_history: { status: RevisionStatus; at: string }[];
  error?: string | null;
  commit_sha?: string | null;
  /** The commit a push named (build_on_push): the build fetches it rather than the head of repo_ref. */
  source_commit?: string;
  graphs?: GraphInfo[];
  artifact_prefix?: string;
  execution_arn?: string;
  launches?: number;
  redeploy_of?: string;
  /** A redeploy of a built revision deploys that artifact again without building. */
  reuses_artifact?: boolean;
  built_at?: string;
  /** AWS: the runtime function version deployed for this revision. */
  runtime_version?: string;
  /** The hash of the token the revision's runtime presents (trace ingestion checks it). */
  runtime_token_hash?: string;
  created_at: string;
  updated_at: string;
}

export const revisionsPk = (tenant: string, deployment: string) => `T#${tenant}#DEPLOYMENT#${deployment}`;

export const revisions = repository<RevisionRecord, { tenant: string; deployment: string; id: string }>({
  table: "main",
  key: ({ tenant, deployment, id }) => ({ PK: revisionsPk(tenant, deployment), SK: `REV#${id}` }),
  keysOf: (r) => ({
    PK: revisionsPk(r.tenant_id, r.deployment_id),
    SK: `REV#${r.id}`,
    ...(TERMINAL.includes(r.status) ? {} : { GSI1PK: shardKey(REVISIONS_INFLIGHT, r.id), GSI1SK: r.id }),
  }),
});

// — listeners and integrations —

export interface ListenerRecord {
  id: string;
  tenant_id: string;
  compute_type: "k8s";
  compute_id: string;
  compute_config: { k8s_namespaces: string[] | null };
  version: string | null;
  created_at: string;
  updated_at: string;
}
export const listenersPk = (tenant: string) => `T#${tenant}#LISTENER`;
export const listeners = repository<ListenerRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: listenersPk(tenant), SK: id }),
  keysOf: (l) => ({ PK: listenersPk(l.tenant_id), SK: l.id }),
});

/** A listener's compute id, held so that two listeners of a workspace cannot share one. */
export interface ListenerComputeRecord {
  tenant: string;
  compute_id: string;
  listener_id: string;
}
const computePk = (tenant: string) => `T#${tenant}#LISTENERCOMPUTE`;
export const listenerComputeIds = repository<ListenerComputeRecord, { tenant: string; compute_id: string }>({
  table: "main",
  key: ({ tenant, compute_id }) => ({ PK: computePk(tenant), SK: compute_id }),
  keysOf: (c) => ({ PK: computePk(c.tenant), SK: c.compute_id }),
});

export interface IntegrationRecord {
  id: string;
  tenant_id: string;
  installation_id: number;
  name: string;
  api_url: string;
  /** The access token, KMS-sealed: write-only. */
  token_sealed: Sealed;
  /** The secret GitHub signs webhook deliveries with, KMS-sealed: write-only. Absent: deliveries are refused. */
  webhook_secret_sealed?: Sealed;
  created_at: string;
  updated_at: string;
}
export const integrationsPk = (tenant: string) => `T#${tenant}#INTEGRATION`;
export const integrationKeys = { byIdPk: (id: string) => `INTEGRATION#${id}`, byIdSk: "INTEGRATION" };
export const integrations = repository<IntegrationRecord, { tenant: string; id: string }>({
  table: "main",
  key: ({ tenant, id }) => ({ PK: integrationsPk(tenant), SK: id }),
  keysOf: (i) => ({
    PK: integrationsPk(i.tenant_id),
    SK: i.id,
    GSI1PK: integrationKeys.byIdPk(i.id),
    GSI1SK: integrationKeys.byIdSk,
  }),
});

/** An integration whatever its workspace, by id (the webhook receiver: its caller has no API key): an
 * integration record of that id, never another item carrying its index keys. */
export async function integrationById(id: string): Promise<IntegrationRecord | undefined> {
  if (tooLongForKey(id)) return undefined;
  for await (const items of integrations.indexPages({
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk",
    values: { ":pk": integrationKeys.byIdPk(id) },
  })) {
    const found = items.find((i) => i.id === id);
    if (found) return found;
  }
  return undefined;
}

/** A GitHub webhook delivery an integration has received: written once (a conditional put), kept a week. */
export interface WebhookDeliveryRecord {
  tenant_id: string;
  integration_id: string;
  delivery_id: string;
  event: string;
  /** The revisions the delivery made. */
  revisions: { deployment_id: string; revision_id: string }[];
  created_at: string;
  /** Epoch seconds: DynamoDB's TTL removes it. */
  expires_at: number;
}
const deliveriesPk = (tenant: string, integration: string) =>
  `T#${tenant}#INTEGRATION#${integration}#DELIVERY`;
export const webhookDeliveries = repository<
  WebhookDeliveryRecord,
  { tenant: string; integration: string; delivery: string }
>({
  table: "main",
  key: ({ tenant, integration, delivery }) => ({ PK: deliveriesPk(tenant, integration), SK: delivery }),
  keysOf: (d) => ({ PK: deliveriesPk(d.tenant_id, d.integration_id), SK: d.delivery_id }),
});
