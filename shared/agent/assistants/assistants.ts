import { z } from "zod";
import {
  CREATE_ONLY,
  cancelCodes,
  isConditionFailure,
  type Key,
  queryAll,
  queryPage,
  toItem,
  transact,
} from "../../aws/ddb.ts";
import { config } from "../../config.ts";
import { Conflict, NotFound } from "../../errors.ts";
import { uuidv5 } from "../../ids.ts";
import { contains } from "../../json-contains.ts";
import { logger } from "../../log.ts";
import {
  type AssistantRecord,
  type AssistantVersionRecord,
  agentKeys,
  assistants,
  assistantVersions,
} from "../../records/agent.ts";
import { tableName } from "../../tables.ts";
import { isoNow } from "../../time.ts";
import { type AuthFilters, matchesAuthFilters } from "../auth/scope.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { type CompiledGraphLike, loadedGraph } from "../deployment/graphs.ts";

// Assistants of a deployment's agent server: a configured graph, versioned. Stored in the main table under the
// deployment scope, the current version and every version (records and keys: shared/records/agent.ts), and
// changed only by conditional writes.

/** The namespace the LangGraph API server derives a graph's default assistant id in (uuid5 of the graph id). */
export const GRAPH_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";
export const defaultAssistantId = (graphId: string) => uuidv5(graphId, GRAPH_NAMESPACE);

const Json = z.record(z.string(), z.unknown());
export const AssistantConfig = z.looseObject({
  tags: z.array(z.string()).optional(),
  recursion_limit: z.number().int().optional(),
  configurable: Json.optional(),
});

export const Assistant = z.object({
  assistant_id: z.string(),
  graph_id: z.string(),
  config: AssistantConfig,
  context: z.unknown(),
  metadata: Json,
  version: z.number().int(),
  name: z.string(),
  description: z.string().nullable().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Assistant = z.output<typeof Assistant>;
export type AssistantVersion = Omit<Assistant, "updated_at">;

const FIELDS = [
  "assistant_id",
  "graph_id",
  "config",
  "context",
  "metadata",
  "version",
  "name",
  "description",
  "created_at",
  "updated_at",
] as const;
export const ASSISTANT_FIELDS = FIELDS;

const pk = (d: AgentDeployment) => agentKeys.assistantsPk(d.scope);
const versionSk = agentKeys.versionSk;

function toAssistant(item: AssistantRecord | AssistantVersionRecord): Assistant {
  const a: Record<string, unknown> = {};
  for (const f of FIELDS) a[f] = item[f];
  a.config ??= {};
  a.context ??= {};
  a.metadata ??= {};
  a.description ??= null;
  if (a.updated_at === undefined) a.updated_at = item.created_at;
  return a as Assistant;
}

/** The graph ids the deployment's active revision serves. */
const graphIds = (d: AgentDeployment): string[] => d.graphs.map((g) => g.graph_id);

function assertGraph(d: AgentDeployment, graphId: string) {
  if (!graphIds(d).includes(graphId)) throw new NotFound(`Graph "${graphId}" not found`);
}

// Default assistants are written once per process and revision (conditional put: an existing one is kept).
const ensured = new Map<string, Promise<void>>();
function ensureDefaultAssistants(d: AgentDeployment): Promise<void> {
  const key = `${d.scope}#${d.revision_id}`;
  let p = ensured.get(key);
  if (!p) {
    // LANGGRAPH_CONFIG (the deployment's variable) gives a graph's default assistant its config and context.
    const envConfig = config.agent.langgraphConfig;
    if (typeof envConfig === "string") logger.warn("LANGGRAPH_CONFIG ignored", { reason: envConfig });
    const defaults = typeof envConfig === "object" ? envConfig : {};
    p = Promise.all(
      graphIds(d).map((graphId) => {
        const { context, ...graphConfig } = defaults[graphId] ?? {};
        return createAssistant(d, {
          assistant_id: defaultAssistantId(graphId),
          graph_id: graphId,
          name: graphId,
          metadata: { created_by: "system" },
          if_exists: "do_nothing",
          ...(defaults[graphId] ? { config: graphConfig, context } : {}),
        });
      }),
    ).then(() => undefined);
    p.catch(() => ensured.delete(key));
    ensured.set(key, p);
  }
  return p;
}

export interface AssistantCreate {
  assistant_id?: string;
  graph_id: string;
  config?: Record<string, unknown>;
  context?: unknown;
  metadata?: Record<string, unknown>;
  if_exists?: "raise" | "do_nothing";
  name?: string;
  description?: string | null;
}

export async function createAssistant(d: AgentDeployment, body: AssistantCreate): Promise<Assistant> {
  assertGraph(d, body.graph_id);
  const now = isoNow();
  const id = body.assistant_id ?? crypto.randomUUID();
  const a: Assistant = {
    assistant_id: id,
    graph_id: body.graph_id,
    config: body.config ?? {},
    context: body.context ?? {},
    metadata: body.metadata ?? {},
    version: 1,
    name: body.name ?? "Untitled",
    description: body.description ?? null,
    created_at: now,
    updated_at: now,
  };
  try {
    await transact([
      { Put: assistants.putInput({ PK: pk(d), SK: id, kind: "assistant", ...a }, CREATE_ONLY) },
      { Put: assistantVersions.putInput({ PK: pk(d), SK: versionSk(id, 1), kind: "version", ...a }) },
    ]);
    return a;
  } catch (err) {
    if (!isTransactionConditionFailure(err)) throw err;
    if (body.if_exists === "do_nothing") {
      const existing = await getAssistantRecord(d, id);
      if (existing) return existing;
    }
    throw new Conflict("Assistant already exists");
  }
}

const isTransactionConditionFailure = (err: unknown) =>
  isConditionFailure(err) || Boolean(cancelCodes(err)?.includes("ConditionalCheckFailed"));

async function getAssistantRecord(d: AgentDeployment, id: string): Promise<Assistant | undefined> {
  const item = await assistants.get({ scope: d.scope, id });
  return item ? toAssistant(item) : undefined;
}

export async function getAssistant(d: AgentDeployment, id: string): Promise<Assistant> {
  await ensureDefaultAssistants(d);
  const a = await getAssistantRecord(d, id);
  if (!a) throw new NotFound("Assistant not found");
  return a;
}

/**
 * A run's `assistant_id`: an assistant id, or a graph id meaning that graph's default assistant. Unknown → 404;
 * an assistant of a graph the active revision no longer serves → 404 too. Checked against the deployment's
 * record: no graph code is loaded for it.
 */
export async function resolveAssistant(d: AgentDeployment, assistantIdOrGraphId: string): Promise<Assistant> {
  const id = graphIds(d).includes(assistantIdOrGraphId)
    ? defaultAssistantId(assistantIdOrGraphId)
    : assistantIdOrGraphId;
  const assistant = await getAssistant(d, id);
  assertGraph(d, assistant.graph_id);
  return assistant;
}

/** The loaded graph of a graph id (404 when the active revision does not serve it, 409 when it failed to load). */
export async function graphOf(d: AgentDeployment, graphId: string): Promise<CompiledGraphLike> {
  return (await loadedGraph(d, graphId)).graph;
}

/** Every current assistant of the deployment (versions left out). */
async function allAssistants(d: AgentDeployment): Promise<Assistant[]> {
  await ensureDefaultAssistants(d);
  const items = await queryAll<AssistantRecord>("main", {
    KeyConditionExpression: "PK = :pk",
    FilterExpression: "kind = :kind",
    values: { ":pk": pk(d), ":kind": "assistant" },
    ConsistentRead: true,
  });
  return items.map(toAssistant);
}

/** JSON containment, as the reference's metadata filter: the threads' one (bounded in depth). */
export { contains };

export interface AssistantFilter {
  metadata?: Record<string, unknown>;
  /** Custom auth's filters on metadata (auth-scope.ts): only the assistants the user may see. */
  auth?: AuthFilters;
  graph_id?: string;
  name?: string;
}

const matches = (a: Assistant, f: AssistantFilter) =>
  (!f.graph_id || a.graph_id === f.graph_id) &&
  (!f.name || a.name.toLowerCase().includes(f.name.toLowerCase())) &&
  (!f.metadata || contains(a.metadata, f.metadata)) &&
  matchesAuthFilters(a.metadata, f.auth);

export interface AssistantSearch extends AssistantFilter {
  limit: number;
  offset: number;
  sort_by?: (typeof SORT_BY)[number];
  sort_order?: "asc" | "desc";
  select?: (typeof FIELDS)[number][];
}
export const SORT_BY = ["assistant_id", "graph_id", "name", "created_at", "updated_at"] as const;

export async function searchAssistants(
  d: AgentDeployment,
  q: AssistantSearch,
): Promise<{ assistants: Partial<Assistant>[]; total: number }> {
  const found = (await allAssistants(d)).filter((a) => matches(a, q));
  const by = q.sort_by ?? "created_at";
  const dir = (q.sort_order ?? "desc") === "asc" ? 1 : -1;
  found.sort((a, b) => dir * (String(a[by]) < String(b[by]) ? -1 : String(a[by]) > String(b[by]) ? 1 : 0));
  const page = found.slice(q.offset, q.offset + q.limit);
  const select = q.select;
  const assistants = select
    ? page.map((a) => Object.fromEntries(select.map((f) => [f, a[f]])) as Partial<Assistant>)
    : page;
  return { assistants, total: found.length };
}

export async function countAssistants(d: AgentDeployment, f: AssistantFilter): Promise<number> {
  return (await allAssistants(d)).filter((a) => matches(a, f)).length;
}

export interface AssistantPatch {
  graph_id?: string;
  config?: Record<string, unknown>;
  context?: unknown;
  metadata?: Record<string, unknown>;
  name?: string;
  description?: string | null;
}

/** Writes a new version (metadata merged, the rest replaced when given) and makes it current. */
export async function updateAssistant(
  d: AgentDeployment,
  id: string,
  patch: AssistantPatch,
): Promise<Assistant> {
  if (patch.graph_id !== undefined) assertGraph(d, patch.graph_id);
  for (let attempt = 0; ; attempt++) {
    const current = await getAssistant(d, id);
    const latest = await latestVersion(d, id);
    const version = Math.max(latest, current.version) + 1;
    const now = isoNow();
    const next: Assistant = {
      ...current,
      graph_id: patch.graph_id ?? current.graph_id,
      config: patch.config ?? current.config,
      context: patch.context ?? current.context,
      metadata: { ...current.metadata, ...(patch.metadata ?? {}) },
      name: patch.name ?? current.name,
      description: patch.description !== undefined ? patch.description : (current.description ?? null),
      version,
      created_at: now,
      updated_at: now,
    };
    try {
      await transact([
        {
          Put: assistantVersions.putInput(
            { PK: pk(d), SK: versionSk(id, version), kind: "version", ...next },
            CREATE_ONLY,
          ),
        },
        {
          Update: assistants.updateInput(
            { scope: d.scope, id },
            {
              set: pickWritable({ ...next, created_at: current.created_at }),
              when: { version: current.version, updated_at: current.updated_at },
            },
          ),
        },
      ]);
      return { ...next, created_at: current.created_at };
    } catch (err) {
      // Another writer made a version first: read again and build on theirs.
      if (!isTransactionConditionFailure(err) || attempt >= 5) {
        if (isTransactionConditionFailure(err)) throw new Conflict("The assistant changed concurrently");
        throw err;
      }
    }
  }
}

const pickWritable = (a: Assistant): Omit<Assistant, "assistant_id"> => {
  const { assistant_id: _id, ...rest } = a;
  return rest;
};

function versionItems(d: AgentDeployment, id: string): Promise<AssistantVersionRecord[]> {
  return assistantVersions.list(pk(d), { prefix: `${id}#V#`, consistent: true });
}

async function latestVersion(d: AgentDeployment, id: string): Promise<number> {
  const page = await queryPage<AssistantVersionRecord>("main", {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :prefix)",
    values: { ":pk": pk(d), ":prefix": `${id}#V#` },
    ScanIndexForward: false,
    Limit: 1,
    ConsistentRead: true,
  });
  return page.items[0]?.version ?? 0;
}

export async function listVersions(
  d: AgentDeployment,
  id: string,
  q: { metadata?: Record<string, unknown>; limit: number; offset: number },
): Promise<AssistantVersion[]> {
  await getAssistant(d, id);
  return (await versionItems(d, id))
    .map(toAssistant)
    .filter((v) => !q.metadata || contains(v.metadata, q.metadata))
    .sort((a, b) => b.version - a.version)
    .slice(q.offset, q.offset + q.limit)
    .map(({ updated_at: _u, ...v }) => v);
}

/** Makes an earlier (or later) version the current one. */
export async function setLatestVersion(d: AgentDeployment, id: string, version: number): Promise<Assistant> {
  const current = await getAssistant(d, id);
  const item = await assistantVersions.get({ scope: d.scope, id, version });
  if (!item) throw new NotFound("Assistant version not found");
  const v = toAssistant(item);
  const next: Assistant = { ...v, created_at: current.created_at, updated_at: isoNow() };
  const written = await assistants.update(
    { scope: d.scope, id },
    { set: pickWritable(next), when: { updated_at: current.updated_at } },
  );
  if (!written) throw new Conflict("The assistant changed concurrently");
  return next;
}

export async function deleteAssistant(d: AgentDeployment, id: string): Promise<void> {
  await getAssistant(d, id);
  const items = await versionItems(d, id);
  // The current item goes first so a concurrent reader never sees an assistant without its versions.
  const keys: Key[] = [assistants.key({ scope: d.scope, id }), ...items.map((i) => ({ PK: i.PK, SK: i.SK }))];
  for (let i = 0; i < keys.length; i += 25)
    await transact(
      keys.slice(i, i + 25).map((k) => ({ Delete: { TableName: tableName("main"), Key: toItem(k) } })),
    );
}
