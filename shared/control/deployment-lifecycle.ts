import type { RuntimeHost } from "../agent/hosting/runtime-host.ts";
import { cancelCodes, transact } from "../aws/ddb.ts";
import { stopExecution } from "../aws/executions.ts";
import { invokeTaskAsync } from "../aws/invoke.ts";
import { config } from "../config.ts";
import { Conflict, NotFound } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import { logger } from "../log.ts";
import { deleteProjectWithRuns } from "../projects/projects.ts";
import {
  DEPLOYMENT_PURGES_PK,
  type DeploymentPurgeRecord,
  type DeploymentRecord,
  deploymentNames,
  deploymentPurges,
  deployments,
  forgetDeploymentRecord,
  TERMINAL,
} from "../records/control.ts";
import { canonicalNow } from "../time.ts";
import { ensureDeploymentCount, oneDeploymentLess } from "./deployment-count.ts";
import {
  createDeployment,
  type DeploymentCreate,
  type DeploymentPatch,
  getDeployment,
  updateDeployment,
} from "./deployments.ts";
import { launchRevision } from "./pipeline.ts";
import {
  allRevisions,
  deletePrefix,
  deleteRevisionRecord,
  getRevision,
  latestRevisionWrites,
  newRevision,
} from "./revisions.ts";

// What the deployment endpoints do: each write that makes a revision also starts its pipeline.

export async function createAndLaunch(tenant: string, body: DeploymentCreate): Promise<DeploymentRecord> {
  const { deployment, revisionId } = await createDeployment(tenant, body);
  await launchRevision(tenant, deployment.id, revisionId);
  return deployment;
}

export async function updateAndLaunch(
  tenant: string,
  id: string,
  patch: DeploymentPatch,
): Promise<DeploymentRecord> {
  const { deployment, revisionId } = await updateDeployment(tenant, id, patch);
  if (revisionId) await launchRevision(tenant, id, revisionId);
  return deployment;
}

/**
 * A redeploy is a new revision with the given revision's source config; when that revision was built, its
 * artifact is deployed again without a build.
 */
export async function redeploy(
  tenant: string,
  deploymentId: string,
  revisionId: string,
): Promise<DeploymentRecord> {
  const d = await getDeployment(tenant, deploymentId);
  const source = await getRevision(tenant, deploymentId, revisionId);
  const id = uuidv7();
  const at = canonicalNow();
  const reuse = Boolean(source.built_at && source.artifact_prefix);
  const revision = newRevision(tenant, deploymentId, id, source.source, source.source_revision_config, at, {
    redeploy_of: source.id,
    // A pushed revision redeploys the commit it was made for, not its branch's head of today.
    ...(source.source_commit ? { source_commit: source.source_commit } : {}),
    ...(reuse
      ? {
          reuses_artifact: true,
          artifact_prefix: source.artifact_prefix,
          commit_sha: source.commit_sha ?? null,
        }
      : {}),
  });
  try {
    await transact(
      latestRevisionWrites(d, revision, { source_revision_config: source.source_revision_config }),
    );
  } catch (err) {
    if (cancelCodes(err)) throw new Conflict("The deployment changed while it was being redeployed: retry");
    throw err;
  }
  await launchRevision(tenant, deploymentId, id);
  return getDeployment(tenant, deploymentId);
}

/**
 * Deletes a deployment: in one transaction its record and name go and a tombstone (the purge record) is written,
 * so it stops serving at once and what it leaves is known; then `purgeDeployment` removes the rest. A crash
 * in between leaves the tombstone, which the control plane's sweeper resumes; a retried DELETE answers 204
 * (resuming an unfinished purge) for as long as the tombstone lives (a day after the purge is done).
 */
export async function destroy(
  /** How the deployment's runtime is removed (the entry point's host). */
  host: Pick<RuntimeHost, "remove">,
  tenant: string,
  id: string,
  deleteTracingProject: boolean,
): Promise<void> {
  const d = await deployments.get({ tenant, id }, true);
  if (!d) {
    const tomb = await deploymentPurges.get({ tenant, id }, true);
    if (!tomb) throw new NotFound("Deployment not found");
    if (!tomb.done_at) await resumePurge(host, tomb);
    return;
  }
  const tomb: DeploymentPurgeRecord = {
    tenant_id: tenant,
    deployment_id: id,
    tracing_project_id: d.tracing_project_id ?? null,
    delete_tracing_project: deleteTracingProject,
    created_at: canonicalNow(),
  };
  await ensureDeploymentCount(tenant);
  try {
    await transact([
      oneDeploymentLess(tenant),
      { Put: deploymentPurges.putInput(tomb) },
      { Delete: deploymentNames.deleteInput({ tenant, name: d.name }) },
      { Delete: { ...deployments.deleteInput({ tenant, id }), ConditionExpression: "attribute_exists(PK)" } },
    ]);
  } catch (err) {
    if (!cancelCodes(err)) throw err;
    // A concurrent DELETE won: answer as a retry does.
    return destroy(host, tenant, id, deleteTracingProject);
  }
  forgetDeploymentRecord(tenant, id);
  await resumePurge(host, tomb);
}

/** Runs a tombstone's purge; a failure is recorded on it and left to the sweeper (the deployment is gone already). */
async function resumePurge(host: Pick<RuntimeHost, "remove">, tomb: DeploymentPurgeRecord): Promise<void> {
  await purgeDeployment(host, tomb).catch((err) => purgeFailed(tomb.tenant_id, tomb.deployment_id, err));
}

/** A purge given up after this many failed attempts (the sweeper resumes one every 5 minutes). */
export const PURGE_MAX_ATTEMPTS = 5;
/** Errors no retry can cure: a call the role may not make fails the same way every time. */
const DENIED = ["AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "Forbidden"];

/**
 * A purge step failed: the tombstone says why and counts the attempt; a denied call, or the last attempt, gives
 * the purge up (failed_at), so the sweeper does not retry it forever. The tombstone stays for an operator to read.
 */
export async function purgeFailed(tenant: string, id: string, err: unknown): Promise<void> {
  const error = `${(err as Error)?.name ?? "Error"}: ${(err as Error)?.message ?? String(err)}`.slice(
    0,
    1000,
  );
  const tomb = await deploymentPurges.updateReturning(
    { tenant, id },
    { set: { error }, add: { attempts: 1 } },
  );
  const denied = DENIED.includes((err as Error)?.name);
  const givenUp = denied || (tomb?.attempts ?? 0) >= PURGE_MAX_ATTEMPTS;
  if (givenUp) await deploymentPurges.update({ tenant, id }, { set: { failed_at: canonicalNow() } });
  logger.warn(
    givenUp
      ? "a deleted deployment's cleanup failed and is given up; its tombstone says why"
      : "a deleted deployment's cleanup failed; the sweeper resumes it",
    { deployment_id: id, attempts: tomb?.attempts, error: err },
  );
}

/**
 * Removes what a deleted deployment left, each step idempotent: its runtime, pipelines in flight and revisions,
 * artifacts and logs, the tracing project when asked; last the agent server's threads, checkpoints, assistants,
 * crons and store, in an asynchronous task that marks the tombstone done when it has finished.
 */
export async function purgeDeployment(
  host: Pick<RuntimeHost, "remove">,
  tomb: DeploymentPurgeRecord,
): Promise<void> {
  const { tenant_id: tenant, deployment_id: id } = tomb;
  await host
    .remove(tenant, id)
    .catch((err) =>
      logger.warn("removing a deleted deployment's runtime failed", { deployment_id: id, error: err }),
    );
  for (const r of await allRevisions(tenant, id)) {
    if (!TERMINAL.includes(r.status) && r.execution_arn)
      await stopExecution(r.execution_arn, "The deployment was deleted").catch((err) =>
        logger.warn("stopping a deleted deployment's pipeline failed", { revision_id: r.id, error: err }),
      );
    await deleteRevisionRecord(r);
  }
  await deletePrefix(`artifacts/${tenant}/${id}/`);
  await deletePrefix(`logs/${tenant}/${id}/`);
  // The runtime's code and sealed environment of each revision (AWS).
  await deletePrefix(`runtimes/${tenant}/${id}/`);
  if (tomb.delete_tracing_project && tomb.tracing_project_id)
    await deleteProjectWithRuns(tenant, tomb.tracing_project_id).catch((err) => {
      if (!(err instanceof NotFound)) throw err;
    });
  await invokeTaskAsync("PurgeDeploymentData", { tenant_id: tenant, deployment_id: id });
}

/** The agent data purge finished: the tombstone is done, and lives a day more for retried DELETEs. */
export async function deploymentPurged(tenant: string, id: string): Promise<void> {
  await deploymentPurges.update(
    { tenant, id },
    {
      set: { done_at: canonicalNow(), expires_at: Math.floor(Date.now() / 1000) + TOMBSTONE_TTL_S },
    },
  );
}

const TOMBSTONE_TTL_S = 24 * 3600;
/**
 * A purge not done this long after it began (or was last resumed) is resumed by the sweeper. On the local cloud
 * the sweeper runs once, at start-up, when no purge of the stopped process can still be running.
 */
const purgeStaleMs = () => (config.localMode ? 0 : 5 * 60_000);

/** Whether the sweeper resumes a tombstone's purge: neither done nor given up, and stale. */
export function purgeToResume(tomb: DeploymentPurgeRecord, now: number): boolean {
  const since = Date.parse(tomb.resumed_at ?? tomb.created_at);
  return !tomb.done_at && !tomb.failed_at && now - since >= purgeStaleMs();
}

/** Resumes the purges a crash or a failure left unfinished (the control plane's sweeper). */
export async function sweepDeploymentPurges(
  host: Pick<RuntimeHost, "remove">,
  now = Date.now(),
): Promise<string[]> {
  const resumed: string[] = [];
  for (const tomb of await deploymentPurges.list(DEPLOYMENT_PURGES_PK, { consistent: true })) {
    if (!purgeToResume(tomb, now)) continue;
    const at = canonicalNow();
    await deploymentPurges.update(
      { tenant: tomb.tenant_id, id: tomb.deployment_id },
      { set: { resumed_at: at } },
    );
    await resumePurge(host, tomb);
    resumed.push(tomb.deployment_id);
  }
  return resumed;
}
