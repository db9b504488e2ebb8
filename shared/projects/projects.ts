import { randomUUID } from "node:crypto";
import {
  type TransactWriteItem,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { z } from "zod";
import { dynamo } from "../aws/clients.ts";
import {
  CREATE_ONLY,
  cancelCodes,
  getItem,
  isConditionFailure,
  putInput,
  toItem,
  transact,
} from "../aws/ddb.ts";
import { invokeTaskAsync } from "../aws/invoke.ts";
import { config } from "../config.ts";
import { Conflict, NotFound, validationError } from "../errors.ts";
import { type ProjectNameRecord, type ProjectRecord, projectKeys, projects } from "../records/projects.ts";
import { TRACE_TIERS, type TraceTier } from "../records/runs.ts";
import { tableName } from "../tables.ts";
import { canonicalTime, isoNow } from "../time.ts";

// Tracing projects ("sessions" on the LangSmith wire). A project record plus a name record whose conditional
// put makes names unique per tenant; both are written in one transaction. Records: shared/records/projects.ts.
export const Project = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  extra: z.record(z.string(), z.unknown()).nullable(),
  tenant_id: z.string(),
  start_time: z.string(),
  end_time: z.string().nullable(),
  reference_dataset_id: z.string().nullable(),
  /** The retention tier its new runs get (`longlived` or `shortlived`). */
  trace_tier: z.enum(TRACE_TIERS),
  run_count: z.number().int(),
  first_run_start_time: z.string().nullable(),
  last_run_start_time: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Project = z.output<typeof Project>;

const time = z.string().refine((s) => canonicalTime(s) !== undefined, "Input should be a valid datetime");
const extra = z.record(z.string(), z.unknown()).nullish();

/** What the SDKs send to create a project; other fields they add are accepted and ignored. */
export const ProjectCreate = z.looseObject({
  name: z.string().min(1).max(512),
  description: z.string().nullish(),
  extra,
  id: z.uuid().nullish(),
  reference_dataset_id: z.uuid().nullish(),
  start_time: time.nullish(),
  trace_tier: z.enum(TRACE_TIERS).nullish(),
});
export interface NewProject {
  name: string;
  description?: string | null;
  extra?: Record<string, unknown> | null;
  id?: string | null;
  reference_dataset_id?: string | null;
  start_time?: string | null;
  trace_tier?: TraceTier | null;
  /** Return the project already holding the name instead of a 409. */
  upsert?: boolean;
}

export const ProjectUpdate = z.looseObject({
  name: z.string().min(1).max(512).optional(),
  description: z.string().nullish(),
  extra,
  end_time: time.nullish(),
  /** Applies to runs ingested from now on; runs already stored keep theirs. */
  trace_tier: z.enum(TRACE_TIERS).nullish(),
});
export interface ProjectPatch {
  name?: string;
  description?: string | null;
  extra?: Record<string, unknown> | null;
  end_time?: string | null;
  trace_tier?: TraceTier | null;
}

export interface ProjectQuery {
  name?: string;
  name_contains?: string;
  ids?: string[];
  /** Only projects of these reference datasets. */
  reference_datasets?: string[];
  /** true: projects without a reference dataset; false: with one. */
  reference_free?: boolean;
  /** Only projects whose `extra.metadata` holds each of these keys with an equal value. */
  metadata?: Record<string, unknown>;
  limit: number;
  offset: number;
}

const DEFAULT_NAME = "default";
const TAKEN = "Project with this name already exists";
const nameRecord = (tenant: string, id: string, name: string): ProjectNameRecord => ({
  ...projectKeys.name(tenant, name),
  id,
  name,
});

function toProject(item: ProjectRecord): Project {
  return {
    id: item.id,
    name: item.name,
    description: item.description ?? null,
    extra: item.extra ?? null,
    tenant_id: item.tenant_id,
    start_time: item.start_time,
    end_time: item.end_time ?? null,
    reference_dataset_id: item.reference_dataset_id ?? null,
    trace_tier: item.trace_tier ?? config.runs.defaultTraceTier,
    run_count: Number(item.run_count ?? 0),
    first_run_start_time: item.first_run_start_time ?? null,
    last_run_start_time: item.last_run_start_time ?? null,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

// name→id and known ids, so ingestion does not read the project for every batch. Entries expire because a
// project deleted through another Lambda instance is not evicted here.
const CACHE_MS = 60_000;
const cache = new Map<string, { id: string; tier: TraceTier; until: number }>();
const nameEntry = (tenant: string, name: string) => `n\u0000${tenant}\u0000${name}`;
const idEntry = (tenant: string, id: string) => `i\u0000${tenant}\u0000${id}`;

function remember(tenant: string, project: Pick<Project, "id" | "name" | "trace_tier">): void {
  if (cache.size > 10_000) cache.clear();
  const until = Date.now() + CACHE_MS;
  const entry = { id: project.id, tier: project.trace_tier, until };
  cache.set(nameEntry(tenant, project.name), entry);
  cache.set(idEntry(tenant, project.id), entry);
}

/**
 * The retention tier of a project's new runs (read through the cache: a change reaches other Lambda
 * instances within a minute). A project deleted meanwhile gets the default: its runs are being purged.
 */
export async function projectTier(tenant: string, id: string): Promise<TraceTier> {
  const hit = cache.get(idEntry(tenant, id));
  if (hit && hit.until > Date.now()) return hit.tier;
  const item = await projects.get({ tenant, id }, false);
  if (!item) return config.runs.defaultTraceTier;
  const project = toProject(item);
  remember(tenant, project);
  return project.trace_tier;
}

function cached(key: string): string | undefined {
  const hit = cache.get(key);
  return hit && hit.until > Date.now() ? hit.id : undefined;
}

function forget(tenant: string, project: Pick<Project, "id" | "name">): void {
  cache.delete(nameEntry(tenant, project.name));
  cache.delete(idEntry(tenant, project.id));
}

export async function createProject(tenant: string, input: NewProject): Promise<Project> {
  const now = isoNow();
  const project: Project = {
    id: input.id ?? randomUUID(),
    name: input.name,
    description: input.description ?? null,
    extra: input.extra ?? null,
    tenant_id: tenant,
    start_time: (input.start_time && canonicalTime(input.start_time)) || now,
    end_time: null,
    reference_dataset_id: input.reference_dataset_id ?? null,
    trace_tier: input.trace_tier ?? config.runs.defaultTraceTier,
    run_count: 0,
    first_run_start_time: null,
    last_run_start_time: null,
    created_at: now,
    updated_at: now,
  };
  // Run times are left out rather than null so recordRuns can test them with attribute_not_exists.
  const { first_run_start_time, last_run_start_time, ...stored } = project;
  try {
    await transact([
      { Put: projects.putInput(stored, CREATE_ONLY) },
      { Put: putInput("main", nameRecord(tenant, project.id, project.name), CREATE_ONLY) },
    ]);
  } catch (err) {
    const codes = cancelCodes(err);
    if (codes?.[1] === "ConditionalCheckFailed") {
      const existing = input.upsert ? await findProjectByName(tenant, input.name) : undefined;
      if (existing) return existing;
      throw new Conflict(TAKEN);
    }
    if (codes?.[0] === "ConditionalCheckFailed") throw new Conflict("Project with this id already exists");
    throw err;
  }
  remember(tenant, project);
  return project;
}

export async function getProject(tenant: string, id: string): Promise<Project> {
  const item = await projects.get({ tenant, id });
  if (!item) throw new NotFound("Project not found");
  return toProject(item);
}

async function findProjectByName(tenant: string, name: string): Promise<Project | undefined> {
  // Consistent reads: a creator that lost a race must see the winner it collided with.
  const ref = await getItem<ProjectNameRecord>("main", projectKeys.name(tenant, name), true);
  if (!ref) return undefined;
  const item = await projects.get({ tenant, id: ref.id });
  return item ? toProject(item) : undefined;
}

/** Whether `metadata` (a project's `extra.metadata`) holds every wanted key with an equal (JSON) value. */
function holds(metadata: unknown, wanted: Record<string, unknown>): boolean {
  if (!metadata || typeof metadata !== "object") return Object.keys(wanted).length === 0;
  const m = metadata as Record<string, unknown>;
  return Object.entries(wanted).every(
    ([k, v]) => Object.hasOwn(m, k) && JSON.stringify(m[k]) === JSON.stringify(v),
  );
}

export async function listProjects(tenant: string, q: ProjectQuery): Promise<Project[]> {
  // A workspace always has its "default" project, as on the hosted platform: made on first list if missing.
  await resolveProject(tenant, {});
  const needle = q.name_contains?.toLowerCase();
  const keep = (p: Project) =>
    (q.name === undefined || p.name === q.name) &&
    (needle === undefined || p.name.toLowerCase().includes(needle)) &&
    (q.ids === undefined || q.ids.includes(p.id)) &&
    (q.reference_datasets === undefined || q.reference_datasets.includes(p.reference_dataset_id ?? "")) &&
    (q.reference_free === undefined || (p.reference_dataset_id === null) === q.reference_free) &&
    (q.metadata === undefined || holds(p.extra?.metadata, q.metadata));
  const page = (list: Project[]) => list.filter(keep).slice(q.offset, q.offset + q.limit);
  if (q.name !== undefined) {
    const found = await findProjectByName(tenant, q.name);
    return page(found ? [found] : []);
  }
  if (q.ids) {
    const items = await Promise.all([...new Set(q.ids)].map((id) => projects.get({ tenant, id }, false)));
    const found = items.filter((i) => i !== undefined).map(toProject);
    return page(found.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id)));
  }
  // GSI1 keeps the tenant's projects in creation order; read newest first until the page is full.
  const out: Project[] = [];
  for await (const items of projects.indexPages({
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk",
    values: { ":pk": projectKeys.pk(tenant) },
    ScanIndexForward: false,
  })) {
    out.push(
      ...items
        .filter((p) => p.tenant_id === tenant)
        .map(toProject)
        .filter(keep),
    );
    if (out.length >= q.offset + q.limit) break;
  }
  return out.slice(q.offset, q.offset + q.limit);
}

export async function updateProject(tenant: string, id: string, patch: ProjectPatch): Promise<Project> {
  const current = await getProject(tenant, id);
  const fields: Partial<ProjectRecord> = { updated_at: isoNow() };
  if (patch.name !== undefined) fields.name = patch.name;
  if (patch.description !== undefined) fields.description = patch.description;
  if (patch.extra !== undefined) fields.extra = patch.extra;
  if (patch.trace_tier !== undefined) fields.trace_tier = patch.trace_tier ?? config.runs.defaultTraceTier;
  if (patch.end_time !== undefined)
    fields.end_time = patch.end_time && (canonicalTime(patch.end_time) ?? null);
  const key = { tenant, id };
  const rename = patch.name !== undefined && patch.name !== current.name ? patch.name : undefined;
  if (rename === undefined) {
    if (!(await projects.update(key, { set: fields }))) throw new NotFound("Project not found");
  } else {
    try {
      await transact(renameItems(tenant, current, rename, projects.updateInput(key, { set: fields })));
    } catch (err) {
      const codes = cancelCodes(err);
      if (codes?.[2] === "ConditionalCheckFailed") throw new Conflict(TAKEN);
      if (codes?.includes("ConditionalCheckFailed")) throw new NotFound("Project not found");
      throw err;
    }
  }
  forget(tenant, current);
  return getProject(tenant, id);
}

function renameItems(
  tenant: string,
  current: Project,
  name: string,
  update: ReturnType<typeof projects.updateInput>,
) {
  const TableName = tableName("main");
  return [
    { Update: update },
    {
      Delete: {
        TableName,
        Key: toItem(projectKeys.name(tenant, current.name)),
        ConditionExpression: "id = :id",
        ExpressionAttributeValues: toItem({ ":id": current.id }),
      },
    },
    { Put: putInput("main", nameRecord(tenant, current.id, name), CREATE_ONLY) },
  ] satisfies TransactWriteItem[];
}

/** Removes the project and frees its name. Its runs are deleted by the runs store, which owns run data. */
async function deleteProject(tenant: string, id: string): Promise<Project> {
  const project = await getProject(tenant, id);
  const TableName = tableName("main");
  try {
    await transact([
      { Delete: { ...projects.deleteInput({ tenant, id }), ConditionExpression: "attribute_exists(PK)" } },
      {
        Delete: {
          TableName,
          Key: toItem(projectKeys.name(tenant, project.name)),
          ConditionExpression: "attribute_not_exists(PK) OR id = :id",
          ExpressionAttributeValues: toItem({ ":id": id }),
        },
      },
    ]);
  } catch (err) {
    if (cancelCodes(err)?.includes("ConditionalCheckFailed")) throw new NotFound("Project not found");
    throw err;
  }
  forget(tenant, project);
  return project;
}

/** Deletes the project now and its runs shortly after, through the asynchronous PurgeProjectRuns task. */
export async function deleteProjectWithRuns(tenant: string, id: string): Promise<Project> {
  const project = await deleteProject(tenant, id);
  await invokeTaskAsync("PurgeProjectRuns", {
    tenant_id: tenant,
    session_id: project.id,
    first_run_start_time: project.first_run_start_time,
    last_run_start_time: project.last_run_start_time,
  });
  return project;
}

/** The project a run goes into: an existing id, a name (created on first use), else "default". */
export async function resolveProject(
  tenant: string,
  ref: { session_id?: string | null; session_name?: string | null },
): Promise<string> {
  if (ref.session_id) {
    if (cached(idEntry(tenant, ref.session_id))) return ref.session_id;
    const item = await projects.get({ tenant, id: ref.session_id }, false);
    if (!item) throw validationError(["body", "session_id"], `Project ${ref.session_id} does not exist`);
    remember(tenant, toProject(item));
    return ref.session_id;
  }
  const name = ref.session_name || DEFAULT_NAME;
  const hit = cached(nameEntry(tenant, name));
  if (hit) return hit;
  // Upsert settles a race for the name: the loser reads the winner's project.
  const project =
    (await findProjectByName(tenant, name)) ?? (await createProject(tenant, { name, upsert: true }));
  remember(tenant, project);
  return project.id;
}

/** Counts ingested runs and widens the project's first/last run start times. */
export async function recordRuns(
  tenant: string,
  projectId: string,
  runs: { added: number; minStart: string; maxStart: string },
): Promise<void> {
  const min = canonicalTime(runs.minStart);
  const max = canonicalTime(runs.maxStart);
  const Key = toItem(projects.key({ tenant, id: projectId }));
  const exists = "attribute_exists(PK)";
  if (max) {
    // Newer runs usually come last, so the count rides on the update of last_run_start_time.
    const done = await conditional({
      Key,
      UpdateExpression: "ADD run_count :n SET last_run_start_time = :t",
      ConditionExpression: `${exists} AND (attribute_not_exists(last_run_start_time) OR last_run_start_time < :t)`,
      ExpressionAttributeValues: toItem({ ":n": runs.added, ":t": max }),
    });
    if (!done && runs.added) await addCount(Key, runs.added);
  } else if (runs.added) await addCount(Key, runs.added);
  if (min) {
    await conditional({
      Key,
      UpdateExpression: "SET first_run_start_time = :t",
      ConditionExpression: `${exists} AND (attribute_not_exists(first_run_start_time) OR first_run_start_time > :t)`,
      ExpressionAttributeValues: toItem({ ":t": min }),
    });
  }
}

const addCount = (Key: UpdateItemCommandInput["Key"], n: number) =>
  conditional({
    Key,
    UpdateExpression: "ADD run_count :n",
    ConditionExpression: "attribute_exists(PK)",
    ExpressionAttributeValues: toItem({ ":n": n }),
  });

/** An update whose failed condition means "nothing to change" (or a deleted project): false, not an error. */
async function conditional(input: Omit<UpdateItemCommandInput, "TableName">): Promise<boolean> {
  try {
    await dynamo().send(new UpdateItemCommand({ TableName: tableName("main"), ...input }));
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}
