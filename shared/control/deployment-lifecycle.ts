import { runtimeHost } from "../agent/runtime/host.ts";
import { cancelCodes, transact } from "../aws/ddb.ts";
import { stopExecution } from "../aws/executions.ts";
import { invokeTaskAsync } from "../aws/invoke.ts";
import { Conflict, NotFound } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import { logger } from "../log.ts";
import { deleteProjectWithRuns } from "../projects/projects.ts";
import { type DeploymentRecord, deployments, revisions, TERMINAL } from "../records/control.ts";
import { canonicalNow } from "../time.ts";
import {
  createDeployment,
  type DeploymentCreate,
  type DeploymentPatch,
  getDeployment,
  removeDeployment,
  updateDeployment,
} from "./deployments.ts";
import { launchRevision } from "./pipeline.ts";
import { allRevisions, deletePrefix, deleteRevisionRecord, getRevision, newRevision } from "./revisions.ts";

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
    ...(reuse
      ? {
          reuses_artifact: true,
          artifact_prefix: source.artifact_prefix,
          commit_sha: source.commit_sha ?? null,
        }
      : {}),
  });
  try {
    await transact([
      { Put: revisions.putInput(revision) },
      {
        Update: deployments.updateInput(
          { tenant, id: deploymentId },
          {
            set: {
              latest_revision_id: id,
              source_revision_config: source.source_revision_config,
              updated_at: at,
            },
            when: { latest_revision_id: d.latest_revision_id },
          },
        ),
      },
    ]);
  } catch (err) {
    if (cancelCodes(err)) throw new Conflict("The deployment changed while it was being redeployed: retry");
    throw err;
  }
  await launchRevision(tenant, deploymentId, id);
  return getDeployment(tenant, deploymentId);
}

/**
 * Stops serving at once (the record goes first), then stops pipelines in flight and removes revisions,
 * artifacts and logs; the agent server's threads, checkpoints, assistants and store go through an asynchronous
 * task; with deleteTracingProject also the tracing project and its runs.
 */
export async function destroy(tenant: string, id: string, deleteTracingProject: boolean): Promise<void> {
  const d = await getDeployment(tenant, id);
  await removeDeployment(d);
  await runtimeHost()
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
  await invokeTaskAsync("PurgeDeploymentData", { tenant_id: tenant, deployment_id: id });
  await deletePrefix(`artifacts/${tenant}/${id}/`);
  await deletePrefix(`logs/${tenant}/${id}/`);
  if (deleteTracingProject && d.tracing_project_id)
    await deleteProjectWithRuns(tenant, d.tracing_project_id).catch((err) => {
      if (!(err instanceof NotFound)) throw err;
    });
}
