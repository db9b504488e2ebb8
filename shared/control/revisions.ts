import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { z } from "zod";
import { s3 } from "../aws/clients.ts";
import { BufferedLog, LOG_TYPE } from "../build/buffered-log.ts";
import { config } from "../config.ts";
import { NotFound } from "../errors.ts";
import {
  type DeploymentRecord,
  deployments,
  REVISION_STATUSES,
  REVISIONS_INFLIGHT,
  type RevisionConfig,
  type RevisionRecord,
  type RevisionStatus,
  revisions,
  revisionsPk,
  TERMINAL,
} from "../records/control.ts";
import { shardKeys } from "../records/shard.ts";
import { canonicalNow, isoNow } from "../time.ts";

// Revisions of a deployment and how their status moves (compat-notes "Control plane"):
//   QUEUED → AWAITING_BUILD → BUILDING → AWAITING_DEPLOY → DEPLOYING → DEPLOYED
//   or BUILD_FAILED / DEPLOY_FAILED / CREATE_FAILED, or INTERRUPTED when a newer revision supersedes it.
// Records: shared/records/control.ts. Build and deploy logs are S3 objects beside the revision's artifact.

/** A new revision, QUEUED. */
export function newRevision(
  tenant: string,
  deployment: string,
  id: string,
  source: string,
  cfg: RevisionConfig,
  at: string,
  extra: Partial<RevisionRecord> = {},
): RevisionRecord {
  return {
    id,
    deployment_id: deployment,
    tenant_id: tenant,
    status: "QUEUED",
    source,
    source_revision_config: cfg,
    status_history: [{ status: "QUEUED", at }],
    error: null,
    artifact_prefix: `artifacts/${tenant}/${deployment}/${id}/`,
    launches: 1,
    created_at: at,
    updated_at: at,
    ...extra,
  };
}

/**
 * The transaction items that make `revision` its deployment's latest: the revision, and the deployment's
 * pointer (with `set`) on condition that it still names the revision read (`d`), so two writers cannot both win.
 */
export function latestRevisionWrites(
  d: Pick<DeploymentRecord, "tenant_id" | "id" | "latest_revision_id">,
  revision: RevisionRecord,
  set: Partial<DeploymentRecord> = {},
) {
  return [
    { Put: revisions.putInput(revision) },
    {
      Update: deployments.updateInput(
        { tenant: d.tenant_id, id: d.id },
        {
          set: { latest_revision_id: revision.id, updated_at: revision.created_at, ...set },
          when: { latest_revision_id: d.latest_revision_id },
        },
      ),
    },
  ];
}

/** A revision config as the API shows it (on a deployment and on each of its revisions). */
export const RevisionConfigOut = z.object({
  repo_ref: z.string().nullable(),
  graph_config_path: z.string(),
  langgraph_config_path: z.string(),
  image_uri: z.string().nullable(),
});

export const revisionConfigWire = (rc: RevisionConfig): z.output<typeof RevisionConfigOut> => ({
  repo_ref: rc.repo_ref ?? null,
  graph_config_path: rc.graph_config_path,
  langgraph_config_path: rc.graph_config_path,
  image_uri: rc.image_uri ?? null,
});

export const RevisionOut = z.object({
  id: z.string(),
  deployment_id: z.string(),
  status: z.enum(REVISION_STATUSES),
  source: z.string(),
  source_revision_config: RevisionConfigOut,
  status_history: z.array(z.object({ status: z.string(), at: z.string() })),
  error: z.string().nullable(),
  commit_sha: z.string().nullable(),
  graphs: z.array(z.object({ graph_id: z.string(), export_name: z.string(), nodes: z.array(z.string()) })),
  redeploy_of: z.string().nullable(),
  logs_url: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RevisionOut = z.output<typeof RevisionOut>;

/** A revision's build and deploy logs as text (each line time-stamped); empty until that phase has started. */
export const RevisionLogsOut = z.object({
  revision_id: z.string(),
  status: z.string(),
  build_log: z.string(),
  deploy_log: z.string(),
});

export function revisionWire(r: RevisionRecord): RevisionOut {
  return {
    id: r.id,
    deployment_id: r.deployment_id,
    status: r.status,
    source: r.source,
    source_revision_config: revisionConfigWire(r.source_revision_config),
    status_history: r.status_history ?? [],
    error: r.error ?? null,
    // A pushed revision names its commit from the start; a built one, the commit it was built from.
    commit_sha: r.commit_sha ?? r.source_commit ?? null,
    graphs: r.graphs ?? [],
    redeploy_of: r.redeploy_of ?? null,
    logs_url: `/v2/deployments/${r.deployment_id}/revisions/${r.id}/logs`,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function getRevision(tenant: string, deployment: string, id: string): Promise<RevisionRecord> {
  const r = await revisions.get({ tenant, deployment, id });
  if (!r) throw new NotFound("Revision not found");
  return r;
}

/** Every revision of a deployment, newest first (ids are time-ordered). */
export async function allRevisions(tenant: string, deployment: string): Promise<RevisionRecord[]> {
  return revisions.list(revisionsPk(tenant, deployment), {
    prefix: "REV#",
    newestFirst: true,
    consistent: true,
  });
}

export async function listRevisions(
  tenant: string,
  deployment: string,
  q: { limit: number; offset: number; status?: string },
): Promise<{ resources: RevisionRecord[]; offset: number }> {
  const all = (await allRevisions(tenant, deployment)).filter((r) => !q.status || r.status === q.status);
  const resources = all.slice(q.offset, q.offset + q.limit);
  return { resources, offset: q.offset + resources.length };
}

const revisionOf = (r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">) => ({
  tenant: r.tenant_id,
  deployment: r.deployment_id,
  id: r.id,
});

/**
 * Moves a revision to `to` when its status is one of `from` (any non-terminal status when omitted); false
 * when it was not (interrupted, already failed, or moved on). Terminal statuses leave the in-flight index.
 */
export async function transition(
  r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">,
  to: RevisionStatus,
  opts: { from?: readonly RevisionStatus[]; set?: Partial<RevisionRecord> } = {},
): Promise<boolean> {
  const at = canonicalNow();
  return revisions.update(revisionOf(r), {
    set: { status: to, updated_at: at, ...opts.set },
    append: { status_history: [{ status: to, at }] },
    remove: TERMINAL.includes(to) ? ["GSI1PK", "GSI1SK"] : [],
    ...(opts.from ? { in: { status: opts.from } } : { notIn: { status: TERMINAL } }),
  });
}

export async function setRevisionFields(r: RevisionRecord, set: Partial<RevisionRecord>): Promise<void> {
  await revisions.update(revisionOf(r), {
    set: { ...set, updated_at: canonicalNow() },
  });
}

export async function deleteRevisionRecord(r: RevisionRecord): Promise<void> {
  await revisions.delete(revisionOf(r));
}

/** Revisions of every tenant whose pipeline has not ended (revision records only: their keys are checked). */
export async function inFlightRevisions(): Promise<RevisionRecord[]> {
  const out: RevisionRecord[] = [];
  for (const pk of shardKeys(REVISIONS_INFLIGHT))
    for await (const items of revisions.indexPages({
      IndexName: "GSI1",
      KeyConditionExpression: "GSI1PK = :pk",
      values: { ":pk": pk },
    }))
      out.push(...items);
  return out;
}

// — logs —

export type LogKind = "build" | "deploy";
export const logKey = (r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">, kind: LogKind) =>
  `logs/${r.tenant_id}/${r.deployment_id}/${r.id}/${kind}.log`;

/** A revision's log, written to its object in S3 (after `earlier`, what it held already). */
export class RevisionLog extends BufferedLog {
  constructor(r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">, kind: LogKind, earlier = "") {
    super(
      (body) =>
        s3().send(
          new PutObjectCommand({
            Bucket: config.artifactBucket,
            Key: logKey(r, kind),
            Body: body,
            ContentType: LOG_TYPE,
          }),
        ),
      1000,
      earlier,
    );
  }
}

export async function readLog(
  r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">,
  kind: LogKind,
): Promise<string> {
  try {
    const out = await s3().send(
      new GetObjectCommand({ Bucket: config.artifactBucket, Key: logKey(r, kind) }),
    );
    return await out.Body!.transformToString("utf8");
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e?.name === "NoSuchKey" || e?.$metadata?.httpStatusCode === 404) return "";
    throw err;
  }
}

/** Adds a line to a revision's log after its step ended (a live runtime stopped by a sandbox limit). */
export async function appendLog(
  r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">,
  kind: LogKind,
  text: string,
): Promise<void> {
  const before = await readLog(r, kind);
  await s3().send(
    new PutObjectCommand({
      Bucket: config.artifactBucket,
      Key: logKey(r, kind),
      Body: `${before}${isoNow()} ${text}\n`,
      ContentType: LOG_TYPE,
    }),
  );
}

/** Deletes every object under a prefix (a revision's artifact, a deployment's logs). */
export async function deletePrefix(prefix: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await s3().send(
      new ListObjectsV2Command({ Bucket: config.artifactBucket, Prefix: prefix, ContinuationToken: token }),
    );
    const objects = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (objects.length)
      await s3().send(
        new DeleteObjectsCommand({ Bucket: config.artifactBucket, Delete: { Objects: objects } }),
      );
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}
