import { randomUUID } from "node:crypto";
import { PutItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { batchGet, batchWrite } from "../aws/batch.ts";
import { dynamo } from "../aws/clients.ts";
import { fromItem, getItem, isConditionFailure, putInput, toItem } from "../aws/ddb.ts";
import { config } from "../config.ts";
import type { ValidationIssue } from "../errors.ts";
import { priceEntriesFor } from "../llm/price-store.ts";
import { projectTier, recordRuns, resolveProject } from "../projects/projects.ts";
import {
  type FeedbackStatsRecord,
  isExpired,
  JSON_FIELDS,
  shardOf,
  type TraceRunDerived,
  type TraceRunItem,
  type TraceRunPatchRecord,
  type TraceRunRecord,
  traceRunKeys,
  traceRuns,
} from "../records/runs.ts";
import { tableName } from "../tables.ts";
import { canonicalNow, canonicalTime, dayOf } from "../time.ts";
import { deriveFields } from "./derive.ts";
import { applyStats } from "./feedback.ts";
import { lineageOf } from "./lineage.ts";
import { loadFields, storeField } from "./payloads.ts";
import { RunCreate, type RunCreateIn, RunPatch, type RunPatchIn } from "./schema.ts";
import { recordThreads, threadIndexKeys } from "./thread-index.ts";
import { promoteUpgradedTraces, recordExpiry, runExpiry, upgradeTrace } from "./tiers.ts";

// The runs store. Posts are written with BatchWriteItem (idempotent on run id: a re-sent post rewrites the
// same item). Patches are kept in a durable patch record as well as applied to the run; a post re-applies
// any patch record after writing, and a patch applies itself only when the run exists — each side writes
// first and checks the other after, so a patch that arrives before its post is never lost. Records and
// their key layout: shared/records/runs.ts.
// A runtime's traces are ingested for one project (`ownProject`): its posts and patches are conditional writes
// that touch no run (nor patch record) of another project, so a run id of another project cannot be overwritten.
export const partitionKey = traceRunKeys.partition;

/** A run item as a post writes it, before the derived fields are added. */
type PostedRunItem = Omit<TraceRunItem, keyof TraceRunDerived>;

export interface IngestResult {
  accepted: string[];
  errors: ValidationIssue[];
  /** Runs left as they were: ingestion for one project met a run id of another (OTHER_PROJECT). */
  refused?: { id: string; reason: string }[];
}

/** Why a post or patch for one project was refused: its run id is a run of another project. */
export const OTHER_PROJECT = "run_of_another_project";

/** The condition that a write touches no item of another project (none yet, or one of `project`). */
const ofProject = (project: string) => ({
  ConditionExpression: "attribute_not_exists(PK) OR session_id = :own",
  ExpressionAttributeValues: toItem({ ":own": project }),
});

const PATCH_FIELDS = ["end_time", "tags", "status", ...JSON_FIELDS] as const;

export async function buildPostItem(tenant: string, sessionId: string, run: RunCreateIn, receivedAt: string) {
  const id = (run.id ?? randomUUID()).toLowerCase();
  const start = canonicalTime(run.start_time ?? Date.now())!;
  const end = run.end_time == null ? null : (canonicalTime(run.end_time) ?? null);
  const lineage = lineageOf({
    id,
    dotted_order: run.dotted_order,
    trace_id: run.trace_id,
    parent_run_id: run.parent_run_id,
  });
  const item: PostedRunItem = {
    ...traceRunKeys.run(tenant, id),
    GSI1PK: partitionKey(tenant, sessionId, dayOf(start), shardOf(id)),
    GSI1SK: `${start}#${id}`,
    GSI2PK: traceRunKeys.trace(tenant, lineage.trace_id),
    GSI2SK: run.dotted_order ?? `${start}#${id}`,
    id,
    tenant_id: tenant,
    session_id: sessionId,
    name: run.name,
    run_type: run.run_type,
    start_time: start,
    end_time: end,
    tags: run.tags ?? [],
    dotted_order: run.dotted_order ?? null,
    reference_example_id: run.reference_example_id ?? null,
    received_at: receivedAt,
    ...lineage,
  };
  const content = { ...run, error: run.error ?? undefined };
  for (const f of JSON_FIELDS)
    await storeField(
      item,
      f,
      content[f] ?? (f === "error" ? undefined : null),
      receivedAt.replace(/\W/g, ""),
    );
  return { item, content: { ...content, run_type: run.run_type, start_time: start, end_time: end } };
}

function issue(
  kind: string,
  index: number,
  err: { issues: { path: PropertyKey[]; message: string; code: string }[] },
  id?: unknown,
) {
  return err.issues.map((i) => ({
    loc: ["body", kind, index, ...i.path.map(String)],
    msg: `run ${typeof id === "string" ? id : `#${index}`}: ${i.message}`,
    type: i.code,
  }));
}

/** Puts the built runs: all at once, or (for one project) each on the condition that it is not another's. */
async function writePosts(items: TraceRunItem[], ownProject?: string): Promise<Set<string>> {
  if (ownProject === undefined) {
    await batchWrite(
      "runs",
      items.map((item) => ({ put: item })),
      { parallel: true },
    );
    return new Set();
  }
  const refused = new Set<string>();
  await Promise.all(
    items.map(async (item) => {
      try {
        await dynamo().send(new PutItemCommand(putInput("runs", item, ofProject(ownProject))));
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        refused.add(item.id);
      }
    }),
  );
  return refused;
}

export async function ingestPosts(
  tenant: string,
  raw: unknown[],
  kind = "post",
  ownProject?: string,
): Promise<IngestResult> {
  const errors: ValidationIssue[] = [];
  const valid: RunCreateIn[] = [];
  raw.forEach((r, i) => {
    const parsed = RunCreate.safeParse(r);
    if (parsed.success) valid.push(parsed.data);
    else errors.push(...issue(kind, i, parsed.error, (r as { id?: unknown })?.id));
  });
  if (!valid.length) return { accepted: [], errors };
  const receivedAt = canonicalNow();
  const prices = await priceEntriesFor(tenant);
  // One project lookup per distinct session in the batch.
  const sessions = new Map<string, Promise<string>>();
  const sessionOf = (r: RunCreateIn) => {
    const k = r.session_id ? `id:${r.session_id}` : `name:${r.session_name ?? ""}`;
    if (!sessions.has(k))
      sessions.set(k, resolveProject(tenant, { session_id: r.session_id, session_name: r.session_name }));
    return sessions.get(k)!;
  };
  const built: { item: TraceRunItem; session: string }[] = [];
  for (const [i, run] of valid.entries()) {
    try {
      const session = await sessionOf(run);
      const tier = await projectTier(tenant, session);
      const { item, content } = await buildPostItem(tenant, session, run, receivedAt);
      item.trace_tier = tier;
      item.expires_at = runExpiry(receivedAt, tier);
      const derived = deriveFields(content, prices);
      if (
        typeof derived.messages_json === "string" &&
        derived.messages_json.length > config.runs.fieldInlineBytes
      )
        delete derived.messages_json;
      const stored = { ...item, ...derived };
      built.push({ item: { ...stored, ...threadIndexKeys(stored) }, session });
    } catch (err) {
      errors.push({
        loc: ["body", kind, i],
        msg: `run ${run.id ?? `#${i}`}: ${(err as { message?: unknown } | null | undefined)?.message ?? err}`,
        type: "value_error",
      });
    }
  }
  // Last write wins within one request when the same id is posted twice.
  const byId = new Map(built.map((b) => [b.item.id, b]));
  const existing = new Set(
    (
      await batchGet<Pick<TraceRunItem, "id">>(
        "runs",
        [...byId.keys()].map((id) => traceRunKeys.run(tenant, id)),
        { projection: "id" },
      )
    ).map((i) => i.id),
  );
  const refused = await writePosts(
    [...byId.values()].map((b) => b.item),
    ownProject,
  );
  for (const id of refused) byId.delete(id);
  const ids = [...byId.keys()];
  // What arrived before the post (or before it was sent again): patches, and the feedback summary.
  const records = await batchGet<
    (TraceRunPatchRecord & { SK: "patch" }) | (FeedbackStatsRecord & { SK: "feedback_stats" })
  >(
    "runs",
    ids.flatMap((id) => [traceRunKeys.patch(tenant, id), traceRunKeys.feedbackStats(tenant, id)]),
  );
  await Promise.all(
    records.map(async (r) => {
      if (r.SK === "patch") await applyToRun(tenant, r.id, r, prices);
      else await applyFeedback(tenant, r, byId);
    }),
  );
  await promoteUpgradedTraces(
    tenant,
    [...byId.values()].map((b) => b.item),
  );
  await countNewRuns(
    tenant,
    [...byId.values()].filter((b) => !existing.has(b.item.id)),
  );
  await recordThreads(
    tenant,
    [...byId.values()].map((b) => b.item),
  );
  return { accepted: ids, errors, ...refusals(refused) };
}

const refusals = (ids: Iterable<string>) => {
  const refused = [...ids].map((id) => ({ id, reason: OTHER_PROJECT }));
  return refused.length ? { refused } : {};
};

/** A run's feedback summary back on the run; feedback that extends retention upgrades the run's trace. */
async function applyFeedback(
  tenant: string,
  r: FeedbackStatsRecord,
  byId: Map<string, { item: TraceRunItem }>,
): Promise<void> {
  if (typeof r.stats_seq === "number") await applyStats(tenant, r.run_id, r.stats_json ?? null, r.stats_seq);
  const run = byId.get(r.run_id)?.item;
  if (r.extend && run && run.trace_tier !== "longlived") await upgradeTrace(tenant, run.trace_id);
}

async function countNewRuns(tenant: string, fresh: { item: TraceRunItem; session: string }[]) {
  const bySession = new Map<string, string[]>();
  for (const b of fresh) bySession.set(b.session, [...(bySession.get(b.session) ?? []), b.item.start_time]);
  await Promise.all(
    [...bySession].map(([session, starts]) => {
      starts.sort();
      return recordRuns(tenant, session, {
        added: starts.length,
        minStart: starts[0],
        maxStart: starts[starts.length - 1],
      });
    }),
  );
}

/** SET expression for the patch fields present in `fields` (already in item form). */
function setExpression(fields: object) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(fields).map(([k, v], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = v;
    return `#f${i} = :v${i}`;
  });
  return { expr: `SET ${sets.join(", ")}`, names, values };
}

/** The item attributes a patch sets: times canonical, JSON fields inline or in S3. */
async function patchAttributes(
  tenant: string,
  id: string,
  patch: RunPatchIn,
  version: string,
): Promise<TraceRunPatchRecord> {
  const attrs: TraceRunPatchRecord = { id, tenant_id: tenant };
  if (patch.end_time !== undefined)
    attrs.end_time = patch.end_time === null ? null : (canonicalTime(patch.end_time) ?? null);
  if (patch.tags != null) attrs.tags = patch.tags;
  if (patch.status != null) attrs.status_hint = patch.status;
  for (const f of JSON_FIELDS)
    if (patch[f] !== undefined && patch[f] !== null) await storeField(attrs, f, patch[f], version);
  return attrs;
}

/**
 * Applies a patch record to its run, if the run exists (and, for a record of one project, is that project's):
 * "applied", "absent" (the post re-applies the record) or "other" (a run of another project, left as it was).
 */
async function applyToRun(
  tenant: string,
  id: string,
  record: TraceRunPatchRecord,
  prices: Awaited<ReturnType<typeof priceEntriesFor>>,
): Promise<"applied" | "absent" | "other"> {
  const project = record.session_id;
  const ownValue = project === undefined ? {} : { ":own": project };
  const fields = Object.fromEntries(
    Object.entries(record).filter(
      ([k]) =>
        (PATCH_FIELDS as readonly string[]).some((f) => k === f || k.startsWith(`${f}_`)) ||
        k === "status_hint",
    ),
  );
  if (!Object.keys(fields).length) return "applied";
  const { expr, names, values } = setExpression(fields);
  let merged: TraceRunItem;
  try {
    const out = await dynamo().send(
      new UpdateItemCommand({
        TableName: tableName("runs"),
        Key: toItem(traceRunKeys.run(tenant, id)),
        UpdateExpression: expr,
        ConditionExpression: `attribute_exists(PK)${project === undefined ? "" : " AND session_id = :own"}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: toItem({ ...values, ...ownValue }),
        ReturnValues: "ALL_NEW",
      }),
    );
    merged = fromItem<TraceRunItem>(out.Attributes!);
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    // Not posted yet: the post re-applies the patch record. Posted in another project: left alone.
    if (project === undefined) return "absent";
    const run = await getItem<Pick<TraceRunItem, "session_id">>("runs", traceRunKeys.run(tenant, id), true);
    return run && run.session_id !== project ? "other" : "absent";
  }
  const content = await loadFields(merged);
  const derived = deriveFields(
    {
      ...content,
      run_type: merged.run_type,
      start_time: merged.start_time,
      end_time: merged.end_time,
      status: merged.status_hint,
    },
    prices,
  );
  if (
    typeof derived.messages_json === "string" &&
    derived.messages_json.length > config.runs.fieldInlineBytes
  )
    derived.messages_json = null;
  // A thread id that a patch brought (metadata sent with the end) puts the run on its thread's index too.
  const d = setExpression({ ...derived, ...threadIndexKeys({ ...merged, thread_id: derived.thread_id }) });
  try {
    await dynamo().send(
      new UpdateItemCommand({
        TableName: tableName("runs"),
        Key: toItem(traceRunKeys.run(tenant, id)),
        UpdateExpression: d.expr,
        ...(project === undefined ? {} : { ConditionExpression: "session_id = :own" }),
        ExpressionAttributeNames: d.names,
        ExpressionAttributeValues: toItem({ ...d.values, ...ownValue }),
      }),
    );
  } catch (err) {
    // Re-posted into another project meanwhile: that post's own fields stand.
    if (!isConditionFailure(err)) throw err;
    return "applied";
  }
  await recordThreads(tenant, [{ ...merged, thread_id: derived.thread_id }]);
  return "applied";
}

export async function ingestPatches(
  tenant: string,
  raw: { id: string; body: unknown }[],
  kind = "patch",
  ownProject?: string,
): Promise<IngestResult> {
  const errors: ValidationIssue[] = [];
  const accepted: string[] = [];
  const refused: string[] = [];
  const prices = await priceEntriesFor(tenant);
  const version = canonicalNow().replace(/\W/g, "");
  await Promise.all(
    raw.map(async ({ id, body }, i) => {
      const parsed = RunPatch.safeParse(body);
      const runId = String(id ?? "").toLowerCase();
      if (!parsed.success || !/^[0-9a-f-]{36}$/.test(runId)) {
        if (!parsed.success) errors.push(...issue(kind, i, parsed.error, id));
        else
          errors.push({ loc: ["body", kind, i, "id"], msg: "run id must be a UUID", type: "uuid_parsing" });
        return;
      }
      const attrs = await patchAttributes(tenant, runId, parsed.data, version);
      if (ownProject !== undefined) attrs.session_id = ownProject;
      const { expr, names, values } = setExpression({ ...attrs, expires_at: recordExpiry() });
      const own = ownProject === undefined ? undefined : ofProject(ownProject);
      try {
        await dynamo().send(
          new UpdateItemCommand({
            TableName: tableName("runs"),
            Key: toItem(traceRunKeys.patch(tenant, runId)),
            UpdateExpression: expr,
            ConditionExpression: own?.ConditionExpression,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ...toItem(values), ...own?.ExpressionAttributeValues },
          }),
        );
      } catch (err) {
        if (!own || !isConditionFailure(err)) throw err;
        refused.push(runId);
        return;
      }
      if ((await applyToRun(tenant, runId, attrs, prices)) === "other") refused.push(runId);
      else accepted.push(runId);
    }),
  );
  return { accepted, errors, ...refusals(refused) };
}

/** A run by id (consistent read). */
export async function getRunItem(tenant: string, id: string): Promise<TraceRunRecord | undefined> {
  const item = await traceRuns.get({ tenant, id: id.toLowerCase() });
  return item && !isExpired(item) ? item : undefined;
}
