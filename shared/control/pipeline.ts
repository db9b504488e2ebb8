import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { deployRuntime, lambdaRuntimes, pruneRuntimeVersions } from "../agent/hosting/lambda-host.ts";
import type { RuntimeHost } from "../agent/hosting/runtime-host.ts";
import { cancelCodes, transact } from "../aws/ddb.ts";
import { executionStatus, startNamedExecution, stopExecution } from "../aws/executions.ts";
import { materializeArtifact, uploadArtifact } from "../build/artifacts.ts";
import { ATTEMPT_ID, unpackArtifact } from "../build/build-exchange.ts";
import type { ArtifactManifest } from "../build/bundle.ts";
import { someGraphLoads } from "../build/smoke.ts";
import { config } from "../config.ts";
import { unsandboxedRefusal } from "../containment/sandbox.ts";
import { BuildError, DeployError } from "../errors.ts";
import { logger } from "../log.ts";
import {
  type DeploymentRecord,
  deployments,
  forgetDeploymentRecord,
  type RevisionRecord,
  type RevisionStatus,
  revisions,
  TERMINAL,
} from "../records/control.ts";
import { canonicalNow } from "../time.ts";
import {
  type BuildEnvOverride,
  buildOutcome,
  builtArtifact,
  closeBuildExchange,
  openBuildExchange,
} from "./build-exchange.ts";
import { unsealSecrets } from "./deployments.ts";
import { integrationToken } from "./integrations.ts";
import { grantedFolders } from "./repo-grants.ts";
import {
  allRevisions,
  inFlightRevisions,
  RevisionLog,
  readLog,
  setRevisionFields,
  transition,
} from "./revisions.ts";

// The revision pipeline (infra/state-machines/revision.asl.json): Prepare → BuildStart → Build (a CodeBuild
// project in AWS, the same build step in a child process locally) → BuildFinish → Deploy → DEPLOYED, or a *_FAILED status with the
// reason in the revision and its log. A newer revision interrupts older ones still in flight.
export const MACHINE = "revision";

export interface PipelineInput {
  tenant_id: string;
  deployment_id: string;
  revision_id: string;
}
const ref = (r: RevisionRecord): PipelineInput => ({
  tenant_id: r.tenant_id,
  deployment_id: r.deployment_id,
  revision_id: r.id,
});
const BUILD_PHASE: readonly RevisionStatus[] = ["QUEUED", "AWAITING_BUILD", "BUILDING"];

async function revisionOf(input: PipelineInput): Promise<RevisionRecord | undefined> {
  return revisions.get({ tenant: input.tenant_id, deployment: input.deployment_id, id: input.revision_id });
}

/** Starts the pipeline of a new revision, after interrupting the deployment's older revisions in flight. */
export async function launchRevision(
  tenant: string,
  deploymentId: string,
  revisionId: string,
): Promise<void> {
  for (const r of await allRevisions(tenant, deploymentId)) {
    if (r.id === revisionId || TERMINAL.includes(r.status)) continue;
    if (await transition(r, "INTERRUPTED", { set: { error: `Superseded by revision ${revisionId}` } }))
      if (r.execution_arn) await stopExecution(r.execution_arn, `Superseded by revision ${revisionId}`);
  }
  const r = await revisions.get({ tenant: tenant, deployment: deploymentId, id: revisionId });
  if (r) await startPipeline(r);
}

async function startPipeline(r: RevisionRecord): Promise<void> {
  try {
    const arn = await startNamedExecution(MACHINE, `${r.id}-${r.launches ?? 1}`, ref(r));
    await setRevisionFields(r, { execution_arn: arn });
  } catch (err) {
    logger.error("starting a revision pipeline failed", { revision_id: r.id, error: err });
    await transition(r, "CREATE_FAILED", {
      set: { error: `The pipeline could not start: ${(err as Error).message}` },
    });
  }
}

/** Task RevisionPrepare: QUEUED moves on; a re-driven pipeline resumes at the phase its record shows. */
export async function prepare(input: PipelineInput): Promise<{ phase: "build" | "deploy" | "done" }> {
  const r = await revisionOf(input);
  if (!r || TERMINAL.includes(r.status)) return { phase: "done" };
  if (r.status === "QUEUED") {
    const next = r.reuses_artifact ? "AWAITING_DEPLOY" : "AWAITING_BUILD";
    if (!(await transition(r, next, { from: ["QUEUED"] }))) return prepare(input);
    return { phase: next === "AWAITING_DEPLOY" ? "deploy" : "build" };
  }
  return { phase: BUILD_PHASE.includes(r.status) ? "build" : "deploy" };
}

/**
 * Task RevisionBuildStart: the revision goes BUILDING and its build gets a job (repository, token, the
 * deployment's secrets) and presigned URLs for its own objects, as the CodeBuild environment overrides. The
 * build step itself (shared/build/build-step.ts) holds no platform credential. Phase "deploy": the revision no
 * longer waits for a build; "failed": it failed here (the revision says why).
 */
export async function startBuild(
  input: PipelineInput,
): Promise<{ phase: "build"; attempt: string; env: BuildEnvOverride[] } | { phase: "deploy" | "failed" }> {
  const r = await revisionOf(input);
  if (!r) return { phase: "failed" };
  if (!(await transition(r, "BUILDING", { from: ["AWAITING_BUILD", "BUILDING"] }))) {
    logger.info("build skipped: the revision no longer waits for a build", { revision_id: r.id });
    return { phase: "deploy" };
  }
  const log = new RevisionLog(r, "build");
  try {
    // On a host without the OS sandbox only the bootstrap workspace's code may run (shared/containment/sandbox.ts).
    const refusal = config.localMode ? unsandboxedRefusal(r.tenant_id) : undefined;
    if (refusal) throw new BuildError(refusal);
    const d = await deployments.get({ tenant: r.tenant_id, id: r.deployment_id });
    if (!d) throw new BuildError("The deployment was deleted");
    const cfg = r.source_revision_config;
    const token = d.source_config.integration_id
      ? await integrationToken(r.tenant_id, d.source_config.integration_id)
      : undefined;
    const ref = r.source_commit ?? cfg.repo_ref ?? undefined;
    const exchange = await openBuildExchange(r, {
      repoUrl: d.source_config.repo_url!,
      ...(ref ? { ref } : {}),
      ...(token ? { token } : {}),
      // The runtime gets all of them as its environment; the build hands npm only those an .npmrc names.
      secrets: await unsealSecrets(d),
      graphConfigPath: cfg.graph_config_path,
      lambdaRuntimes: lambdaRuntimes(),
      ...(config.localMode ? { localRoots: await grantedFolders(r.tenant_id) } : {}),
    });
    return { phase: "build", ...exchange };
  } catch (err) {
    await stepFailed(r, log, "build", err);
    return { phase: "failed" };
  } finally {
    await log.close();
  }
}

/**
 * Task RevisionBuildFinish, after the build step: what it reported decides. Its artifact (untrusted: paths
 * checked, size bounded) is stored under the revision's prefix, its log gets the platform's closing lines, and
 * the revision moves on to AWAITING_DEPLOY — or fails with the build's reason.
 */
export async function finishBuild(
  input: PipelineInput & { attempt?: string },
): Promise<{ phase: "deploy" | "failed" }> {
  const r = await revisionOf(input);
  if (!r) return { phase: "failed" };
  // A retried invocation after the first one decided.
  if (r.status !== "BUILDING") return { phase: r.status === "BUILD_FAILED" ? "failed" : "deploy" };
  const attempt = { ...r, attempt: input.attempt ?? "" };
  const log = new RevisionLog(r, "build", await readLog(r, "build"));
  try {
    if (!ATTEMPT_ID.test(attempt.attempt)) throw new Error("the build's attempt id is missing");
    const outcome = await buildOutcome(attempt);
    if (!outcome.ok) throw outcome.expected ? new BuildError(outcome.error) : new Error(outcome.error);
    // A deployment deleted while it built leaves nothing behind.
    if (!(await revisionOf(input))) throw new BuildError("The deployment was deleted during the build");
    const count = await uploadArtifact(unpackArtifact(await builtArtifact(attempt)), r.artifact_prefix!);
    log.line(`Artifact stored: ${count} files under ${r.artifact_prefix}`);
    log.line("Build succeeded");
    await log.close();
    const ok = await transition(r, "AWAITING_DEPLOY", {
      from: ["BUILDING"],
      set: { commit_sha: outcome.commit ?? null, built_at: canonicalNow() },
    });
    if (!ok) log.line("The revision moved on while it was building: this build is not used");
    return { phase: "deploy" };
  } catch (err) {
    await stepFailed(r, log, "build", err);
    return { phase: "failed" };
  } finally {
    await log.close();
    if (ATTEMPT_ID.test(attempt.attempt))
      await closeBuildExchange(attempt).catch((err) =>
        logger.warn("removing a build's exchange objects failed", { revision_id: r.id, error: err }),
      );
  }
}

/**
 * Task RevisionDeploy: load each graph of the artifact in a child process with the deployment's secrets as
 * its environment, check that it compiles, then switch the deployment's active revision in one transaction
 * with the revision's DEPLOYED — only if no newer revision was created meanwhile. Until then the previous
 * revision keeps serving.
 */
export async function deploy(
  /** How the revision's runtime is told it went live (the entry point's host). */
  host: Pick<RuntimeHost, "activated">,
  input: PipelineInput,
): Promise<{ status: RevisionStatus }> {
  const r = await revisionOf(input);
  if (!r) return { status: "UNKNOWN" };
  if (!(await transition(r, "DEPLOYING", { from: ["AWAITING_DEPLOY", "DEPLOYING"] })))
    return { status: (await revisionOf(input))?.status ?? "UNKNOWN" };
  const log = new RevisionLog(r, "deploy");
  try {
    const d = await deployments.get({ tenant: r.tenant_id, id: r.deployment_id });
    if (!d) throw new DeployError("The deployment was deleted");
    log.line(`Loading the artifact ${r.artifact_prefix}`);
    const dir = await materializeArtifact(r.artifact_prefix!);
    const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
    const secrets = await unsealSecrets(d);
    // The graphs are checked in the revision's own function version (lambda-host.ts: locally the same Lambda and IAM
    // calls, run by the local cloud's Lambda service), which the activation makes live.
    // The function's code goes to S3 as a zip: this task's /tmp keeps no revision past its deploy.
    const runtime = await deployRuntime(
      {
        tenant_id: r.tenant_id,
        deployment_id: r.deployment_id,
        revision_id: r.id,
        artifact_dir: dir,
        env: { ...manifest.env, ...secrets },
        graphs: Object.entries(manifest.graphs).map(([graph_id, g]) => ({
          graph_id,
          export_name: g.export_name,
          nodes: [],
        })),
        tracing_project_id: d.tracing_project_id ?? null,
        ...(manifest.node_version ? { node_version: manifest.node_version } : {}),
      },
      log.line,
    ).finally(() => rm(dir, { recursive: true, force: true }));
    const graphs = runtime.graphs;
    // Some graphs failing deploys the others (their assistants answer why); none loading fails the deploy.
    for (const g of someGraphLoads(graphs))
      log.line(
        g.error
          ? `Graph ${g.graph_id} FAILED to load: ${g.error}`
          : `Graph ${g.graph_id} compiled: nodes ${g.nodes.join(", ")}`,
      );
    const previous = d.active_runtime_version;
    const status = await activate(r, d, graphs, runtime, manifest);
    if (status === "DEPLOYED")
      await pruneRuntimeVersions(r.deployment_id, [runtime.version, ...(previous ? [previous] : [])]).catch(
        (err) => logger.warn("pruning runtime versions failed", { error: err }),
      );
    log.line(status === "DEPLOYED" ? "Deployed: the revision now serves" : "Superseded before it went live");
    // Its runtime takes over now (the previous one finishes its runs), so the first request finds it warm.
    if (status === "DEPLOYED")
      await host
        .activated(r.tenant_id, r.deployment_id)
        .catch((err) =>
          logger.warn("starting the revision's runtime failed", { revision_id: r.id, error: err }),
        );
    return { status };
  } catch (err) {
    return { status: await stepFailed(r, log, "deploy", err) };
  } finally {
    await log.close();
  }
}

/**
 * A failed build or deploy step: the reason goes into the step's log, which is complete before the status says
 * so (a client reading it after BUILD_FAILED finds the reason); an error the step did not expect is logged too.
 */
async function stepFailed(
  r: RevisionRecord,
  log: RevisionLog,
  step: "build" | "deploy",
  err: unknown,
): Promise<"BUILD_FAILED" | "DEPLOY_FAILED"> {
  const expected = step === "build" ? err instanceof BuildError : err instanceof DeployError;
  const message = expected ? (err as Error).message : `Internal ${step} error: ${(err as Error).message}`;
  if (!expected) logger.error(`revision ${step} failed`, { revision_id: r.id, error: err });
  log.line(`${step.toUpperCase()} FAILED: ${message}`);
  await log.close();
  const status = step === "build" ? "BUILD_FAILED" : "DEPLOY_FAILED";
  await transition(r, status, { set: { error: message } });
  return status;
}

async function activate(
  r: RevisionRecord,
  d: DeploymentRecord,
  graphs: unknown[],
  runtime: { version: string; token_hash: string },
  manifest: Pick<ArtifactManifest, "cors" | "auth">,
): Promise<RevisionStatus> {
  const at = canonicalNow();
  try {
    await transact([
      {
        Update: revisions.updateInput(
          { tenant: r.tenant_id, deployment: r.deployment_id, id: r.id },
          {
            set: {
              status: "DEPLOYED",
              graphs,
              updated_at: at,
              runtime_version: runtime.version,
              runtime_token_hash: runtime.token_hash,
            },
            append: { status_history: [{ status: "DEPLOYED", at }] },
            remove: ["GSI1PK", "GSI1SK"],
            when: { status: "DEPLOYING" },
          },
        ),
      },
      {
        Update: deployments.updateInput(
          { tenant: d.tenant_id, id: d.id },
          {
            set: {
              active_revision_id: r.id,
              active_artifact_prefix: r.artifact_prefix,
              graphs,
              // The agent server's CORS policy (answered by the gateway or router) goes live with the revision.
              cors: manifest.cors ?? null,
              // Custom auth too: from now on a request without a platform key goes to the revision's authenticate.
              custom_auth: manifest.auth
                ? { disable_studio_auth: manifest.auth.disable_studio_auth === true }
                : null,
              // The router invokes this version of the runtime function from now on: switched with the active revision.
              active_runtime_version: runtime.version,
              updated_at: at,
            },
            when: { latest_revision_id: r.id },
          },
        ),
      },
    ]);
    forgetDeploymentRecord(d.tenant_id, d.id);
    return "DEPLOYED";
  } catch (err) {
    if (!cancelCodes(err)) throw err;
    await transition(r, "INTERRUPTED", {
      set: { error: "Superseded by a newer revision before it went live" },
    });
    return (
      (await revisions.get({ tenant: r.tenant_id, deployment: r.deployment_id, id: r.id }))?.status ??
      "INTERRUPTED"
    );
  }
}

/**
 * What of a failure's cause the revision keeps. A build that did not succeed fails the Build state with CodeBuild's
 * whole build as its cause (`{"Build":{…}}`), whose environment holds the job's presigned URLs: only the build's
 * id, status and phase are kept.
 */
export function failureDetail(error?: string, cause?: string): string {
  let kept = cause;
  try {
    const build = cause ? (JSON.parse(cause) as { Build?: Record<string, unknown> }).Build : undefined;
    if (build && typeof build === "object")
      kept = `build ${String(build.Id)} ended ${String(build.BuildStatus)} (phase ${String(build.CurrentPhase)})`;
  } catch {
    // A cause that is not JSON is a message: kept as it is.
  }
  return [error, kept].filter(Boolean).join(": ").slice(0, 2000);
}

/** Task RevisionFailed (the state machine's Catch): a step that failed without saying why still fails. */
export async function fail(
  input: PipelineInput,
  error?: string,
  cause?: string,
): Promise<{ status: string }> {
  const r = await revisionOf(input);
  if (!r) return { status: "UNKNOWN" };
  if (TERMINAL.includes(r.status)) return { status: r.status };
  const to: RevisionStatus = BUILD_PHASE.includes(r.status) ? "BUILD_FAILED" : "DEPLOY_FAILED";
  const detail = failureDetail(error, cause);
  await transition(r, to, { set: { error: `The pipeline failed${detail ? `: ${detail}` : ""}` } });
  return { status: to };
}

/**
 * Re-drives revisions whose pipeline is gone (the local process stopped mid-build): a new execution resumes
 * at the phase the record shows. An execution that ended without a final status gets one. Runs at local
 * start-up, and on a schedule in AWS.
 */
export async function sweepRevisions(): Promise<{ redriven: string[]; failed: string[] }> {
  const redriven: string[] = [];
  const failed: string[] = [];
  for (const marker of await inFlightRevisions()) {
    const r = await revisions.get({
      tenant: marker.tenant_id,
      deployment: marker.deployment_id,
      id: marker.id,
    });
    if (!r || TERMINAL.includes(r.status)) continue;
    const state = r.execution_arn ? await executionStatus(r.execution_arn) : { status: "MISSING" };
    if (state.status === "RUNNING") continue;
    if (state.status === "MISSING") {
      const launches = (r.launches ?? 1) + 1;
      await setRevisionFields(r, { launches });
      await startPipeline({ ...r, launches });
      redriven.push(r.id);
    } else {
      await fail(ref(r), state.status, state.cause);
      failed.push(r.id);
    }
  }
  return { redriven, failed };
}
