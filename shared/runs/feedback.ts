import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { z } from "zod";
import { dynamo } from "../aws/clients.ts";
import {
  cancelCodes,
  conditionalUpdate,
  fromItem,
  getItem,
  queryAll,
  queryPages,
  toItem,
  transact,
} from "../aws/ddb.ts";
import { Conflict, NotFound, ValidationFailed, type ValidationIssue } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import {
  type FeedbackPointerRecord,
  type FeedbackRecord,
  isFeedbackOf,
  type TraceRunRecord,
  traceRunKeys,
} from "../records/runs.ts";
import { tableName } from "../tables.ts";
import { canonicalNow, canonicalTime } from "../time.ts";
import { FeedbackConfig, scaleForFeedback } from "./feedback-configs.ts";
import { feedbackStats } from "./feedback-stats.ts";
import { type IndexEntry, presentItems } from "./index-read.ts";
import { RunId } from "./schema.ts";
import { recordExpiry, upgradeTrace } from "./tiers.ts";

// Feedback on runs (`/api/v1/feedback` and the `feedback.<id>` parts of /runs/multipart). A feedback lives in
// its run's partition beside a pointer by its id (shared/records/runs.ts). After every change the run's
// summary is recomputed from a consistent read of its feedback and set on the run as `feedback_stats`;
// a sequence number, taken before that read, keeps a slower recomputation from overwriting a newer one.
// The summary is kept in a record of its own too, so that a run posted after its feedback (or posted again)
// gets it back. A feedback's score is checked against its key's stored config (feedback-configs.ts), or the
// config it brings. Feedback on a trace extends its retention (the trace becomes long-lived) unless the feedback
// says `extend_trace_retention: false`.
const MAX_JSON_BYTES = 64 * 1024;

const json = z.unknown().superRefine((v, ctx) => {
  const text = v === undefined ? "" : JSON.stringify(v);
  if (Buffer.byteLength(text ?? "") > MAX_JSON_BYTES)
    ctx.addIssue({ code: "custom", message: `at most ${MAX_JSON_BYTES} bytes of JSON` });
});
const Score = z.union([z.number().finite(), z.boolean()]).nullish();
const Source = z.looseObject({
  type: z.string().max(64).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

const editable = {
  score: Score,
  value: json.optional(),
  comment: z.string().max(10_000).nullish(),
  correction: json.optional(),
  feedback_config: FeedbackConfig.nullish(),
};

const refused = (message: string) => z.null({ error: message }).optional();

/** What the SDKs send to create a feedback (the REST body, and each `feedback.<id>` part). */
export const FeedbackCreate = z.looseObject({
  id: z.string().uuid().optional(),
  run_id: z.guid({ error: "run_id is required (a run's UUID): feedback is given on a run" }),
  trace_id: RunId.nullish(),
  session_id: z.string().uuid().nullish(),
  key: z.string().min(1).max(180),
  ...editable,
  // The JS SDK sends the config under this name.
  feedbackConfig: FeedbackConfig.nullish(),
  feedback_source: Source.nullish(),
  // Where the run starts: a locator the hosted platform may use; the run is found by its id here.
  start_time: z
    .union([z.string(), z.number()])
    .nullish()
    .refine((v) => v == null || canonicalTime(v) !== undefined, "start_time is not a valid time"),
  extend_trace_retention: z.boolean().nullish(),
  comparative_experiment_id: refused("comparative experiments are not kept here: leave it out"),
  address: refused("agent addresses are not supported here: leave it out"),
});
export type FeedbackCreateIn = z.output<typeof FeedbackCreate>;

export const FeedbackUpdate = z.looseObject(editable);
export type FeedbackUpdateIn = z.output<typeof FeedbackUpdate>;

export const FeedbackOut = z.object({
  id: z.string(),
  run_id: z.string(),
  trace_id: z.string().nullable(),
  session_id: z.string().nullable(),
  key: z.string(),
  score: z.union([z.number(), z.boolean()]).nullable(),
  value: z.unknown(),
  comment: z.string().nullable(),
  correction: z.unknown(),
  feedback_source: z.record(z.string(), z.unknown()).nullable(),
  feedback_config: z.record(z.string(), z.unknown()).nullable(),
  created_at: z.string(),
  modified_at: z.string(),
});
export type Feedback = z.output<typeof FeedbackOut>;

const text = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
const parsed = (t: string | null | undefined) => (typeof t === "string" ? JSON.parse(t) : null);

function toFeedback(r: FeedbackRecord): Feedback {
  return {
    id: r.id,
    run_id: r.run_id,
    trace_id: r.trace_id ?? null,
    session_id: r.session_id ?? null,
    key: r.key,
    score: r.score ?? null,
    value: parsed(r.value_json),
    comment: r.comment ?? null,
    correction: parsed(r.correction_json),
    feedback_source: parsed(r.source_json),
    feedback_config: parsed(r.config_json),
    created_at: r.created_at,
    modified_at: r.modified_at,
  };
}

/** Recomputes a run's feedback summary and sets it on its summary record and on the run (when stored). */
async function refreshStats(tenant: string, runId: string, extend: boolean): Promise<void> {
  const key = traceRunKeys.feedbackStats(tenant, runId);
  const out = await dynamo().send(
    new UpdateItemCommand({
      TableName: tableName("runs"),
      Key: toItem(key),
      UpdateExpression: `ADD seq :one SET tenant_id = :t, run_id = :r, expires_at = :e${extend ? ", extend = :y" : ""}`,
      ExpressionAttributeValues: toItem({
        ":one": 1,
        ":t": tenant,
        ":r": runId,
        ":e": recordExpiry(),
        ...(extend ? { ":y": true } : {}),
      }),
      ReturnValues: "UPDATED_NEW",
    }),
  );
  const seq = Number(fromItem<{ seq: number }>(out.Attributes ?? {}).seq);
  const list = await queryAll<Pick<FeedbackRecord, "key" | "score" | "value_json">>("runs", {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :fb)",
    values: { ":pk": key.PK, ":fb": "feedback#" },
    ConsistentRead: true,
    ProjectionExpression: "#k, score, value_json",
    ExpressionAttributeNames: { "#k": "key" },
  });
  const stats = feedbackStats(list.map((f) => ({ key: f.key, score: f.score, value: parsed(f.value_json) })));
  const statsJson = stats ? JSON.stringify(stats) : null;
  await conditionalUpdate("runs", key, {
    set: { stats_json: statsJson, stats_seq: seq },
    atMost: { stats_seq: seq - 1 },
  });
  await applyStats(tenant, runId, statsJson, seq);
}

/**
 * Sets a summary on the run item, unless the run is not stored yet or already has a newer one (`seq` only moves
 * forward: a slower recomputation changes nothing).
 */
export function applyStats(tenant: string, runId: string, statsJson: string | null, seq: number) {
  return conditionalUpdate("runs", traceRunKeys.run(tenant, runId), {
    set: { feedback_stats_json: statsJson, feedback_seq: seq },
    atMost: { feedback_seq: seq - 1 },
  });
}

type RunRef = Pick<TraceRunRecord, "trace_id" | "session_id" | "trace_tier">;

async function runRef(tenant: string, runId: string): Promise<RunRef | undefined> {
  return getItem<RunRef>("runs", traceRunKeys.run(tenant, runId), true);
}

/** Creates (or, for an id given again on the same run, replaces) a feedback. */
export async function createFeedback(tenant: string, body: FeedbackCreateIn): Promise<Feedback> {
  const config = await scaleForFeedback(
    tenant,
    body.key,
    body.feedback_config ?? body.feedbackConfig,
    body.score,
  );
  const id = (body.id ?? uuidv7()).toLowerCase();
  const runId = body.run_id.toLowerCase();
  const run = await runRef(tenant, runId);
  const now = canonicalNow();
  const traceId = run?.trace_id ?? body.trace_id?.toLowerCase() ?? null;
  const record: FeedbackRecord = {
    ...traceRunKeys.feedback(tenant, runId, id),
    GSI1PK: traceRunKeys.feedbackList(tenant),
    GSI1SK: `${now}#${id}`,
    id,
    tenant_id: tenant,
    run_id: runId,
    trace_id: traceId,
    session_id: run?.session_id ?? body.session_id?.toLowerCase() ?? null,
    key: body.key,
    score: body.score ?? null,
    value_json: text(body.value),
    correction_json: text(body.correction),
    comment: body.comment ?? null,
    source_json: text(body.feedback_source),
    source_type: body.feedback_source?.type ?? null,
    config_json: text(config),
    created_at: now,
    modified_at: now,
    expires_at: recordExpiry(),
  };
  try {
    await transact([
      {
        Put: {
          TableName: tableName("runs"),
          Item: toItem({
            ...traceRunKeys.feedbackPointer(tenant, id),
            run_id: runId,
            expires_at: record.expires_at,
          }),
          ConditionExpression: "attribute_not_exists(PK) OR run_id = :r",
          ExpressionAttributeValues: toItem({ ":r": runId }),
        },
      },
      { Put: { TableName: tableName("runs"), Item: toItem(record) } },
    ]);
  } catch (err) {
    if (cancelCodes(err)?.[0] === "ConditionalCheckFailed")
      throw new Conflict("A feedback with this id already exists on another run");
    throw err;
  }
  const extend = body.extend_trace_retention !== false;
  await refreshStats(tenant, runId, extend);
  if (extend && traceId && run?.trace_tier !== "longlived") await upgradeTrace(tenant, traceId);
  return toFeedback(record);
}

/** Feedback parts of a multipart request: each one created; the ones that fail are reported by part. */
export async function ingestFeedbackParts(
  tenant: string,
  parts: Record<string, unknown>[],
): Promise<{ accepted: string[]; errors: ValidationIssue[] }> {
  const accepted: string[] = [];
  const errors: ValidationIssue[] = [];
  for (const part of parts) {
    const name = `feedback.${String(part.id)}`;
    const body = FeedbackCreate.safeParse(part);
    if (!body.success) {
      errors.push(
        ...body.error.issues.map((i) => ({
          loc: ["body", name, ...i.path.map(String)],
          msg: i.message,
          type: i.code,
        })),
      );
      continue;
    }
    try {
      accepted.push((await createFeedback(tenant, body.data)).id);
    } catch (err) {
      if (!(err instanceof ValidationFailed || err instanceof Conflict)) throw err;
      errors.push({ loc: ["body", name], msg: err.message, type: "value_error" });
    }
  }
  return { accepted, errors };
}

async function findRecord(tenant: string, id: string): Promise<FeedbackRecord> {
  const pointer = await getItem<FeedbackPointerRecord>(
    "runs",
    traceRunKeys.feedbackPointer(tenant, id.toLowerCase()),
    true,
  );
  const record =
    pointer &&
    (await getItem<FeedbackRecord>(
      "runs",
      traceRunKeys.feedback(tenant, pointer.run_id, id.toLowerCase()),
      true,
    ));
  if (!record) throw new NotFound("Feedback not found");
  return record;
}

export async function getFeedback(tenant: string, id: string): Promise<Feedback> {
  return toFeedback(await findRecord(tenant, id));
}

/** Changes the fields given (null clears one); the run's summary follows. */
export async function updateFeedback(tenant: string, id: string, patch: FeedbackUpdateIn): Promise<Feedback> {
  const current = await findRecord(tenant, id);
  const score = patch.score !== undefined ? patch.score : current.score;
  const own = patch.feedback_config !== undefined ? patch.feedback_config : parsed(current.config_json);
  const config = await scaleForFeedback(tenant, current.key, patch.feedback_config, score, own);
  const next: FeedbackRecord = {
    ...current,
    score: score ?? null,
    ...(patch.value !== undefined ? { value_json: text(patch.value) } : {}),
    ...(patch.correction !== undefined ? { correction_json: text(patch.correction) } : {}),
    ...(patch.comment !== undefined ? { comment: patch.comment ?? null } : {}),
    config_json: text(config),
    modified_at: canonicalNow(),
  };
  const updated = await conditionalUpdate(
    "runs",
    { PK: current.PK, SK: current.SK },
    {
      set: {
        score: next.score,
        value_json: next.value_json,
        correction_json: next.correction_json,
        comment: next.comment,
        config_json: next.config_json,
        modified_at: next.modified_at,
      },
    },
  );
  if (!updated) throw new NotFound("Feedback not found");
  await refreshStats(tenant, current.run_id, false);
  return toFeedback(next);
}

export async function deleteFeedback(tenant: string, id: string): Promise<void> {
  const current = await findRecord(tenant, id);
  await transact([
    { Delete: { TableName: tableName("runs"), Key: toItem({ PK: current.PK, SK: current.SK }) } },
    {
      Delete: { TableName: tableName("runs"), Key: toItem(traceRunKeys.feedbackPointer(tenant, current.id)) },
    },
  ]);
  await refreshStats(tenant, current.run_id, false);
}

export interface FeedbackQuery {
  runs?: string[];
  keys?: string[];
  sources?: string[];
  limit: number;
  offset: number;
}

/** Feedback newest first: of the runs named, else of the whole workspace; filtered by key and source type. */
export async function listFeedback(tenant: string, q: FeedbackQuery): Promise<Feedback[]> {
  const keep = (r: FeedbackRecord) =>
    (!q.keys?.length || q.keys.includes(r.key)) &&
    (!q.sources?.length || (r.source_type != null && q.sources.includes(r.source_type)));
  const wanted = q.offset + q.limit;
  const found: FeedbackRecord[] = [];
  if (q.runs?.length) {
    for (const runId of new Set(q.runs.map((r) => r.toLowerCase())))
      found.push(
        ...(
          await queryAll<FeedbackRecord>("runs", {
            KeyConditionExpression: "PK = :pk AND begins_with(SK, :fb)",
            values: { ":pk": traceRunKeys.run(tenant, runId).PK, ":fb": "feedback#" },
            ConsistentRead: true,
          })
        ).filter(keep),
      );
    found.sort((a, b) => b.GSI1SK.localeCompare(a.GSI1SK));
  } else
    for await (const entries of queryPages<IndexEntry>("runs", {
      IndexName: "GSI1",
      KeyConditionExpression: "GSI1PK = :pk",
      values: { ":pk": traceRunKeys.feedbackList(tenant) },
      ScanIndexForward: false,
      Limit: 100,
    })) {
      // The index holds keys: the feedback itself is read from the table.
      const items = await presentItems<FeedbackRecord>(entries);
      found.push(...items.filter((r) => isFeedbackOf(tenant)(r) && keep(r)));
      if (found.length >= wanted) break;
    }
  return found.slice(q.offset, wanted).map(toFeedback);
}
