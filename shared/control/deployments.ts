import { randomUUID } from "node:crypto";
import { z } from "zod";
import { CREATE_ONLY, cancelCodes, transact } from "../aws/ddb.ts";
import { localRepoPath, localRepoProblem } from "../build/local-repos.ts";
import { config, envNameProblem } from "../config.ts";
import { sealRecord, unsealRecord } from "../crypto/envelope.ts";
import { Conflict, NotFound, ValidationFailed, type ValidationIssue } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import { resolveProject } from "../projects/projects.ts";
import {
  DEPLOYMENT_STATUSES,
  type DeploymentRecord,
  deploymentKeys,
  deploymentNames,
  deployments,
  forgetDeploymentRecord,
  type RevisionConfig,
  revisions,
} from "../records/control.ts";
import { canonicalNow } from "../time.ts";
import {
  ensureDeploymentCount,
  maxDeployments,
  oneMoreDeployment,
  tooManyDeployments,
} from "./deployment-count.ts";
import { getIntegration } from "./integrations.ts";
import { getListener } from "./listeners.ts";
import { grantedFolders } from "./repo-grants.ts";
import { newRevision, RevisionConfigOut, revisionConfigWire } from "./revisions.ts";

// Deployments (spec A): a git repository holding a LangGraph.js agent, built and deployed as revisions. Their
// records and repositories are in shared/records/control.ts. Secrets are sealed with KMS envelope encryption
// bound to tenant + deployment; only their names are shown.
const secretsContext = (tenant: string, id: string) => ({
  tenant_id: tenant,
  deployment_id: id,
  purpose: "deployment-secrets",
});

/** The spec writes `gitsource`; the established API's value for a git repository is `github`. */
export const SOURCES = ["github", "gitsource"] as const;
const DEPLOYMENT_TYPES = ["dev", "prod"] as const;

const Secret = z.object({
  name: z.string().superRefine((n, ctx) => {
    const problem = envNameProblem(n);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
  value: z.string().max(65_536),
});
const Secrets = z
  .array(Secret)
  .max(100)
  .refine((list) => new Set(list.map((s) => s.name)).size === list.length, "secret names must be unique");

const nullishString = (max: number) => z.string().max(max).nullish();

const SourceConfig = z.looseObject({
  integration_id: nullishString(128),
  repo_url: nullishString(2048),
  deployment_type: z.enum(DEPLOYMENT_TYPES).nullish(),
  build_on_push: z.boolean().nullish(),
  // Accepted only empty (null, or {}): this platform does not do them, and a field taken must do what it says.
  custom_url: nullishString(2048)
    .refine((v) => !v, {
      error:
        "custom_url is not served by this platform: point your domain at the agent API (in AWS an API Gateway " +
        "custom domain mapped to AgentApiUrl) and leave custom_url null",
    })
    .describe("Not served here: must be null (see the README)"),
  resource_spec: z
    .record(z.string(), z.unknown())
    .nullish()
    .refine((v) => v == null || Object.keys(v).length === 0, {
      error:
        "resource_spec is not served by this platform: a deployment's runtime is sized by the platform " +
        "(in AWS a Lambda function of 1024 MB); leave resource_spec null",
    })
    .describe("Not served here: must be null or {} (see the README)"),
  listener_id: nullishString(128),
  listener_config: z.looseObject({ k8s_namespace: nullishString(253) }).nullish(),
});
export type SourceConfig = z.output<typeof SourceConfig>;

/** `graph_config_path` (spec) and `langgraph_config_path` (existing clients) name the same thing. */
const SourceRevisionConfig = z.looseObject({
  repo_ref: z.string().min(1).max(255).nullish(),
  graph_config_path: z.string().min(1).max(1024).nullish(),
  langgraph_config_path: z.string().min(1).max(1024).nullish(),
  image_uri: nullishString(2048)
    .refine((v) => !v, {
      error:
        "image_uri is not served by this platform: deployments are built from a git repository " +
        "(source_config.repo_url); leave image_uri null",
    })
    .describe("Not served here: must be null (see the README)"),
});
export type SourceRevisionConfigIn = z.output<typeof SourceRevisionConfig>;

export const DeploymentCreate = z.object({
  name: z.string().trim().min(1).max(128),
  source: z.enum(SOURCES),
  source_config: SourceConfig,
  source_revision_config: SourceRevisionConfig.default({}),
  secrets: Secrets.default([]),
});
export type DeploymentCreate = z.output<typeof DeploymentCreate>;

export const DeploymentPatch = z.looseObject({
  source_config: SourceConfig.optional(),
  source_revision_config: SourceRevisionConfig.optional(),
  secrets: Secrets.optional(),
});
export type DeploymentPatch = z.output<typeof DeploymentPatch>;

export const DeploymentOut = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string(),
  source: z.string(),
  source_config: z.record(z.string(), z.unknown()),
  source_revision_config: RevisionConfigOut,
  secrets: z.array(z.object({ name: z.string() })),
  latest_revision_id: z.string(),
  active_revision_id: z.string().nullable(),
  status: z.enum(DEPLOYMENT_STATUSES),
  tracing_project_id: z.string().nullable(),
  image_version: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type DeploymentOut = z.output<typeof DeploymentOut>;

export function toWire(d: DeploymentRecord): DeploymentOut {
  return {
    id: d.id,
    tenant_id: d.tenant_id,
    name: d.name,
    source: d.source,
    source_config: stripNulls(d.source_config),
    source_revision_config: revisionConfigWire(d.source_revision_config),
    secrets: d.secret_names.map((name) => ({ name })),
    latest_revision_id: d.latest_revision_id,
    active_revision_id: d.active_revision_id ?? null,
    status: d.status,
    tracing_project_id: d.tracing_project_id ?? null,
    image_version: null,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

const stripNulls = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** The revision config a new revision builds: the given fields over the current ones. */
function mergeRevisionConfig(current: RevisionConfig | undefined, given: SourceRevisionConfigIn = {}) {
  const { langgraph_config_path, graph_config_path, repo_ref, image_uri } = given;
  return {
    repo_ref: repo_ref ?? current?.repo_ref ?? null,
    graph_config_path:
      graph_config_path ?? langgraph_config_path ?? current?.graph_config_path ?? "langgraph.json",
    image_uri: image_uri ?? current?.image_uri ?? null,
  } satisfies RevisionConfig;
}

/** Checks what the schema cannot: repo_url's scheme, and that referenced listeners and integrations exist. */
async function checkReferences(tenant: string, sc: SourceConfig, creating: boolean): Promise<void> {
  const issues: ValidationIssue[] = [];
  const loc = (f: string) => ["body", "source_config", f];
  if (creating && !sc.repo_url) issues.push({ loc: loc("repo_url"), msg: "Field required", type: "missing" });
  if (sc.repo_url) {
    const local = config.localMode ? localRepoPath(sc.repo_url) : undefined;
    const problem =
      repoUrlProblem(sc.repo_url, config.localMode) ??
      (local ? await localRepoProblem(local, await grantedFolders(tenant)) : undefined);
    if (problem) issues.push({ loc: loc("repo_url"), msg: problem, type: "value_error" });
  }
  if (sc.integration_id && !(await getIntegration(tenant, sc.integration_id)))
    issues.push({ loc: loc("integration_id"), msg: "Integration not found", type: "value_error" });
  if (sc.listener_id && !(await getListener(tenant, sc.listener_id)))
    issues.push({ loc: loc("listener_id"), msg: "Listener not found", type: "value_error" });
  if (issues.length) throw new ValidationFailed(issues);
}

/** Repositories come over https; the local cloud also builds file:// URLs and filesystem paths. */
function repoUrlProblem(url: string, local: boolean): string | undefined {
  if (/^https:\/\//i.test(url)) {
    try {
      const u = new URL(url);
      if (u.username || u.password) return "repo_url must not carry credentials: use an integration";
      return undefined;
    } catch {
      return "repo_url is not a valid URL";
    }
  }
  if (
    local &&
    (/^file:\/\//i.test(url) || /^(\/|\.{1,2}\/|~\/)/.test(url) || !/^[a-z][a-z0-9+.-]*:/i.test(url))
  )
    return undefined;
  return local
    ? "repo_url must be an https URL, a file:// URL or a filesystem path"
    : "repo_url must be an https URL";
}

export async function getDeployment(tenant: string, id: string): Promise<DeploymentRecord> {
  const d = await deployments.get({ tenant, id });
  if (!d) throw new NotFound("Deployment not found");
  return d;
}

export async function unsealSecrets(d: DeploymentRecord): Promise<Record<string, string>> {
  if (!d.secrets_sealed) return {};
  const all = await unsealRecord(d.secrets_sealed, secretsContext(d.tenant_id, d.id));
  // A secret stored before its name was refused (a loader variable) never reaches an environment.
  return Object.fromEntries(Object.entries(all).filter(([name]) => !envNameProblem(name)));
}

const sealSecrets = (tenant: string, id: string, secrets: { name: string; value: string }[]) =>
  secrets.length
    ? sealRecord(Object.fromEntries(secrets.map((s) => [s.name, s.value])), secretsContext(tenant, id))
    : Promise.resolve(undefined);

/** Creates the deployment, its tracing project and its first revision (QUEUED) in one transaction. */
export async function createDeployment(
  tenant: string,
  body: DeploymentCreate,
): Promise<{ deployment: DeploymentRecord; revisionId: string }> {
  await checkReferences(tenant, body.source_config, true);
  const id = randomUUID();
  const revisionId = uuidv7();
  const at = canonicalNow();
  const revisionConfig = mergeRevisionConfig(undefined, body.source_revision_config);
  const deployment: DeploymentRecord = {
    id,
    tenant_id: tenant,
    name: body.name,
    source: body.source,
    source_config: body.source_config,
    source_revision_config: revisionConfig,
    secret_names: body.secrets.map((s) => s.name),
    secrets_sealed: await sealSecrets(tenant, id, body.secrets),
    latest_revision_id: revisionId,
    active_revision_id: null,
    // There is no per-deployment database to wait for: the shared tables serve it at once.
    status: "READY",
    tracing_project_id: await resolveProject(tenant, { session_name: body.name }),
    created_at: at,
    updated_at: at,
  };
  const max = await maxDeployments(tenant);
  await ensureDeploymentCount(tenant);
  try {
    await transact([
      { Put: deploymentNames.putInput({ tenant, name: body.name, deployment_id: id }, CREATE_ONLY) },
      { Put: deployments.putInput(deployment, CREATE_ONLY) },
      { Put: revisions.putInput(newRevision(tenant, id, revisionId, body.source, revisionConfig, at)) },
      oneMoreDeployment(tenant, max),
    ]);
  } catch (err) {
    const codes = cancelCodes(err);
    if (codes?.[0] === "ConditionalCheckFailed")
      throw new Conflict(`A deployment named ${body.name} already exists`);
    if (codes?.[3] === "ConditionalCheckFailed") throw tooManyDeployments(max);
    throw err;
  }
  return { deployment, revisionId };
}

export interface DeploymentQuery {
  limit: number;
  offset: number;
  name_contains?: string;
  status?: string;
  deployment_ids?: string[];
}

/** Newest first; a workspace holds few deployments, so filters run over its one partition. */
export async function listDeployments(
  tenant: string,
  q: DeploymentQuery,
): Promise<{ resources: DeploymentRecord[]; offset: number }> {
  const all = await deployments.list(deploymentKeys.pk(tenant));
  const needle = q.name_contains?.toLowerCase();
  const ids = q.deployment_ids ? new Set(q.deployment_ids) : undefined;
  const matching = all
    .filter(
      (d) =>
        (!needle || d.name.toLowerCase().includes(needle)) &&
        (!q.status || d.status === q.status) &&
        (!ids || ids.has(d.id)),
    )
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
  const resources = matching.slice(q.offset, q.offset + q.limit);
  return { resources, offset: q.offset + resources.length };
}

/**
 * Applies a PATCH: source_config fields merge over the stored ones, secrets are replaced, and a
 * source_revision_config makes a new revision (returned so the caller starts its pipeline).
 */
export async function updateDeployment(
  tenant: string,
  id: string,
  patch: DeploymentPatch,
): Promise<{ deployment: DeploymentRecord; revisionId?: string }> {
  const current = await getDeployment(tenant, id);
  const sourceConfig = { ...current.source_config, ...(patch.source_config ?? {}) };
  if (patch.source_config) await checkReferences(tenant, sourceConfig, false);
  const at = canonicalNow();
  const set: Partial<DeploymentRecord> = { source_config: sourceConfig, updated_at: at };
  const remove: string[] = [];
  if (patch.secrets) {
    set.secret_names = patch.secrets.map((s) => s.name);
    const sealed = await sealSecrets(tenant, id, patch.secrets);
    if (sealed) set.secrets_sealed = sealed;
    else remove.push("secrets_sealed");
  }
  let revisionId: string | undefined;
  const items = [];
  if (patch.source_revision_config) {
    revisionId = uuidv7();
    const revisionConfig = mergeRevisionConfig(current.source_revision_config, patch.source_revision_config);
    set.source_revision_config = revisionConfig;
    set.latest_revision_id = revisionId;
    items.push({
      Put: revisions.putInput(newRevision(tenant, id, revisionId, current.source, revisionConfig, at)),
    });
  }
  // The deployment must still be there and unchanged in its latest revision, or two PATCHes raced.
  items.push({
    Update: deployments.updateInput(
      { tenant, id },
      { set, remove, when: { latest_revision_id: current.latest_revision_id } },
    ),
  });
  try {
    await transact(items);
  } catch (err) {
    if (cancelCodes(err)) throw new Conflict("The deployment changed while it was being updated: retry");
    throw err;
  } finally {
    forgetDeploymentRecord(tenant, id);
  }
  const deployment = await deployments.get({ tenant, id });
  if (!deployment) throw new NotFound("Deployment not found");
  return { deployment, revisionId };
}
