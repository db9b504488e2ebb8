import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { z } from "zod";
import { s3 } from "../aws/clients.ts";
import { conditionalUpdate, deleteItem, getItem, type Item, queryAll } from "../aws/ddb.ts";
import { config } from "../config.ts";
import type { GraphInfo } from "../deploy/smoke.ts";
import { NotFound } from "../errors.ts";
import { canonicalNow, isoNow } from "../time.ts";

// Revisions of a deployment and how their status moves (compat-notes "Control plane"):
//   QUEUED → AWAITING_BUILD → BUILDING → AWAITING_DEPLOY → DEPLOYING → DEPLOYED
//   or BUILD_FAILED / DEPLOY_FAILED / CREATE_FAILED, or INTERRUPTED when a newer revision supersedes it.
//   record  PK T#<tenant>#DEPLOYMENT#<deployment>  SK REV#<uuidv7>   (ids sort by creation: newest first)
//           GSI1 REVISIONS#INFLIGHT / <id> while not terminal, so a sweeper finds unfinished pipelines.
// Build and deploy logs are S3 objects beside the revision's artifact.
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
const INFLIGHT_PK = "REVISIONS#INFLIGHT";

export interface RevisionConfig {
  repo_ref: string | null;
  graph_config_path: string;
  image_uri: string | null;
}

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
  graphs?: GraphInfo[];
  artifact_prefix?: string;
  execution_arn?: string;
  launches?: number;
  redeploy_of?: string;
  /** A redeploy of a built revision deploys that artifact again without building. */
  reuses_artifact?: boolean;
  built_at?: string;
  created_at: string;
  updated_at: string;
}

export const revisionKey = (tenant: string, deployment: string, id: string) => ({
  PK: `T#${tenant}#DEPLOYMENT#${deployment}`,
  SK: `REV#${id}`,
});

export function newRevisionItem(
  tenant: string,
  deployment: string,
  id: string,
  source: string,
  cfg: RevisionConfig,
  at: string,
  extra: Partial<RevisionRecord> = {},
): Item {
  const record: RevisionRecord = {
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
  return { ...revisionKey(tenant, deployment, id), GSI1PK: INFLIGHT_PK, GSI1SK: id, ...record };
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

export function revisionWire(r: RevisionRecord): RevisionOut {
  return {
    id: r.id,
    deployment_id: r.deployment_id,
    status: r.status,
    source: r.source,
    source_revision_config: revisionConfigWire(r.source_revision_config),
    status_history: r.status_history ?? [],
    error: r.error ?? null,
    commit_sha: r.commit_sha ?? null,
    graphs: r.graphs ?? [],
    redeploy_of: r.redeploy_of ?? null,
    logs_url: `/v2/deployments/${r.deployment_id}/revisions/${r.id}/logs`,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function getRevisionRecord(
  tenant: string,
  deployment: string,
  id: string,
): Promise<RevisionRecord | undefined> {
  return (await getItem("main", revisionKey(tenant, deployment, id), true)) as RevisionRecord | undefined;
}

export async function getRevision(tenant: string, deployment: string, id: string): Promise<RevisionRecord> {
  const r = await getRevisionRecord(tenant, deployment, id);
  if (!r) throw new NotFound("Revision not found");
  return r;
}

/** Every revision of a deployment, newest first (ids are time-ordered). */
export async function allRevisions(tenant: string, deployment: string): Promise<RevisionRecord[]> {
  return (await queryAll("main", {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :rev)",
    values: { ":pk": revisionKey(tenant, deployment, "").PK, ":rev": "REV#" },
    ScanIndexForward: false,
    ConsistentRead: true,
  })) as RevisionRecord[];
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

/**
 * Moves a revision to `to` when its status is one of `from` (any non-terminal status when omitted); false
 * when it was not (interrupted, already failed, or moved on). Terminal statuses leave the in-flight index.
 */
export async function transition(
  r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">,
  to: RevisionStatus,
  opts: { from?: readonly RevisionStatus[]; set?: Item } = {},
): Promise<boolean> {
  const at = canonicalNow();
  return conditionalUpdate("main", revisionKey(r.tenant_id, r.deployment_id, r.id), {
    set: { status: to, updated_at: at, ...opts.set },
    append: { status_history: [{ status: to, at }] },
    remove: TERMINAL.includes(to) ? ["GSI1PK", "GSI1SK"] : [],
    ...(opts.from ? { in: { status: opts.from } } : { notIn: { status: TERMINAL } }),
  });
}

export async function setRevisionFields(r: RevisionRecord, set: Item): Promise<void> {
  await conditionalUpdate("main", revisionKey(r.tenant_id, r.deployment_id, r.id), {
    set: { ...set, updated_at: canonicalNow() },
  });
}

export async function deleteRevisionRecord(r: RevisionRecord): Promise<void> {
  await deleteItem("main", revisionKey(r.tenant_id, r.deployment_id, r.id));
}

/** Revisions of every tenant whose pipeline has not ended. */
export async function inFlightRevisions(): Promise<RevisionRecord[]> {
  return (await queryAll("main", {
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk",
    values: { ":pk": INFLIGHT_PK },
  })) as RevisionRecord[];
}

// — logs —

export type LogKind = "build" | "deploy";
const logKey = (r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">, kind: LogKind) =>
  `logs/${r.tenant_id}/${r.deployment_id}/${r.id}/${kind}.log`;

/** A revision's log: lines kept in memory and written to S3 at most every `flushMs`, and on close. */
export class RevisionLog {
  private lines: string[] = [];
  private timer?: NodeJS.Timeout;
  private writing = Promise.resolve();

  constructor(
    private readonly r: Pick<RevisionRecord, "tenant_id" | "deployment_id" | "id">,
    private readonly kind: LogKind,
    private readonly flushMs = 1000,
  ) {}

  readonly line = (text: string): void => {
    for (const l of text.split(/\r?\n/)) if (l.trim()) this.lines.push(`${isoNow()} ${l}`);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushMs);
  };

  flush(): Promise<void> {
    const body = `${this.lines.join("\n")}\n`;
    this.writing = this.writing
      .then(() =>
        s3().send(
          new PutObjectCommand({
            Bucket: config.artifactBucket,
            Key: logKey(this.r, this.kind),
            Body: body,
            ContentType: "text/plain; charset=utf-8",
          }),
        ),
      )
      .then(
        () => undefined,
        () => undefined,
      );
    return this.writing;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

export async function readLog(r: RevisionRecord, kind: LogKind): Promise<string> {
  try {
    const out = await s3().send(
      new GetObjectCommand({ Bucket: config.artifactBucket, Key: logKey(r, kind) }),
    );
    return await out.Body!.transformToString("utf8");
  } catch (err: any) {
    if (err?.name === "NoSuchKey" || err?.$metadata?.httpStatusCode === 404) return "";
    throw err;
  }
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
