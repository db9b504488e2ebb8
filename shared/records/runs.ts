import { createHash } from "node:crypto";
import { repository } from "../aws/repository.ts";
import { config } from "../config.ts";
import { dayOf } from "../time.ts";
import { hashShard } from "./shard.ts";

// Trace runs (runs table). The records of a run share its partition:
//   run    PK <tenant>#<run id>  SK run    GSI1 <tenant>#<session>#<UTC day of start>#<shard> / <start>#<id>
//                                          GSI2 <tenant>#<trace id> / <dotted_order>, else <start>#<id>
//                                          GSI3 <tenant>#<session>#thread#<thread> / <start>#<id> (runs with a thread id)
//   thread          PK <tenant>#<session>#thread#<thread> SK thread  GSI3 <tenant>#<session>#threads / <last start>#<thread>
//   patch  PK <tenant>#<run id>  SK patch  (the durable record of the patches a run received: a post that
//                                          lands after them applies it again)
//   feedback        PK <tenant>#<run id>  SK feedback#<id>   GSI1 <tenant>#feedback / <created_at>#<id>
//   feedback stats  PK <tenant>#<run id>  SK feedback_stats  (re-applied to a run posted after its feedback)
//   tier            PK <tenant>#<trace id> SK tier           (the trace was upgraded to longlived)
//   pointer         PK <tenant>#feedback#<id> SK feedback     (a feedback's run, by feedback id)
//   attachment      PK <tenant>#<run id>  SK attachment#<name> (a file sent with the run; its bytes in S3)
//   OTLP lineage    PK <tenant>#<trace id> SK otel_span#<span> | otel_await#<parent span>#<span> | otel_pending
//                   (shared/runs/otlp-lineage.ts: spans stored before their parent, and the runs spans became)
// Every one carries expires_at (epoch seconds, the table's TTL attribute): a run its tier's retention after
// ingestion, the others the long-lived retention.
// GSI1 partitions runs for export and for reading a project: a project-day is `config.runs.shards` partitions, each a
// paginated Query in start order. GSI2 groups a trace. GSI3 (sparse) groups a thread's runs, and a project's threads
// by their last activity, so thread reads cost the thread's runs, not the project's. Ingestion writes run items by hand (BatchWriteItem, in
// store.ts) and the readers query the indexes page by page; the repository serves reads of one run.

/** The shard of a run id: a string hash, so every writer of a run picks the same GSI1 partition. */
export function shardOf(id: string): number {
  return hashShard(id, config.runs.shards);
}

/** The sort key prefix of a run's attachment records (`attachment#<name>`). */
export const ATTACHMENT_SK_PREFIX = "attachment#";

export const traceRunKeys = {
  run: (tenant: string, id: string) => ({ PK: `${tenant}#${id}`, SK: "run" as const }),
  patch: (tenant: string, id: string) => ({ PK: `${tenant}#${id}`, SK: "patch" as const }),
  /** A feedback on a run, in the run's partition (a consistent Query reads a run's feedback). */
  feedback: (tenant: string, runId: string, id: string) => ({
    PK: `${tenant}#${runId}`,
    SK: `feedback#${id}`,
  }),
  /** The run's feedback summary and its sequence number (re-applied to a run posted again). */
  feedbackStats: (tenant: string, runId: string) => ({
    PK: `${tenant}#${runId}`,
    SK: "feedback_stats" as const,
  }),
  /** Where a feedback lives, by its id alone. */
  feedbackPointer: (tenant: string, id: string) => ({
    PK: `${tenant}#feedback#${id}`,
    SK: "feedback" as const,
  }),
  /** GSI1PK of every feedback of a workspace (GSI1SK `<created_at>#<id>`). */
  feedbackList: (tenant: string) => `${tenant}#feedback`,
  /** A file sent with a run (`attachment.<run id>.<name>` parts), in the run's partition; its bytes are in S3. */
  attachment: (tenant: string, runId: string, name: string) => ({
    PK: `${tenant}#${runId}`,
    SK: `${ATTACHMENT_SK_PREFIX}${name}`,
  }),
  /** A trace upgraded to the long-lived tier (in its root run's partition: the trace id is the root's id). */
  tier: (tenant: string, traceId: string) => ({ PK: `${tenant}#${traceId}`, SK: "tier" as const }),
  /** Which run an OTLP span became, when its id is not its span id's (a langsmith-named span). */
  otelSpan: (tenant: string, traceId: string, spanId: string) => ({
    PK: `${tenant}#${traceId}`,
    SK: `otel_span#${spanId}`,
  }),
  /** An OTLP span's run stored before its parent span: settled when the parent is stored. */
  otelAwait: (tenant: string, traceId: string, parentSpanId: string, spanId: string) => ({
    PK: `${tenant}#${traceId}`,
    SK: `otel_await#${parentSpanId}#${spanId}`,
  }),
  /** The trace has (or had) runs awaiting their parent span: readers of a batch look for awaits only then. */
  otelPending: (tenant: string, traceId: string) => ({
    PK: `${tenant}#${traceId}`,
    SK: "otel_pending" as const,
  }),
  /** GSI3 of a run with a thread id: the thread's runs in a project, in start order. */
  threadRuns: (tenant: string, session: string, thread: string, start: string, id: string) => ({
    GSI3PK: `${tenant}#${session}#thread#${threadKey(thread)}`,
    GSI3SK: `${start}#${id}`,
  }),
  /** A thread of a project (its first and last trace's start), on GSI3 by the project's threads and activity. */
  thread: (tenant: string, session: string, thread: string) => ({
    PK: `${tenant}#${session}#thread#${threadKey(thread)}`,
    SK: "thread" as const,
  }),
  /** GSI3PK of a project's threads (GSI3SK `<last trace's start>#<thread key>`). */
  projectThreads: (tenant: string, session: string) => `${tenant}#${session}#threads`,
  /** GSI1PK: one shard of one project-day. */
  partition: (tenant: string, session: string, day: string, shard: number) =>
    `${tenant}#${session}#${day}#${shard}`,
  /** GSI2PK: one trace. */
  trace: (tenant: string, traceId: string) => `${tenant}#${traceId}`,
};

/** Which run an OTLP span became (traceRunKeys.otelSpan). */
export interface OtlpSpanPointer {
  PK: string;
  SK: string;
  run_id: string;
  span_id: string;
  trace_id: string;
  dotted_order: string | null;
  expires_at: number;
}

/** A stored run waiting for its parent span (traceRunKeys.otelAwait). */
export interface OtlpAwaitRecord {
  PK: string;
  SK: string;
  run_id: string;
  span_id: string;
  parent_span_id: string;
  start_time: string;
  expires_at: number;
}

/** One attachment of a run as stored beside it. */
export interface AttachmentRecord {
  PK: string;
  SK: string;
  tenant_id: string;
  run_id: string;
  name: string;
  mime_type: string;
  size: number;
  /** The object's key in the platform bucket. */
  key: string;
  received_at: string;
  expires_at: number;
}

/** A feedback on a run (traceRunKeys.feedback). */
export interface FeedbackRecord {
  PK: string;
  SK: string;
  GSI1PK: string;
  GSI1SK: string;
  id: string;
  tenant_id: string;
  run_id: string;
  trace_id: string | null;
  session_id: string | null;
  key: string;
  score: number | boolean | null;
  /** JSON text (any JSON, and DynamoDB refuses some maps: empty keys, deep nesting). */
  value_json: string | null;
  correction_json: string | null;
  comment: string | null;
  source_json: string | null;
  source_type: string | null;
  config_json: string | null;
  created_at: string;
  modified_at: string;
  expires_at: number;
}

/** A feedback's run, by the feedback's id (traceRunKeys.feedbackPointer). */
export interface FeedbackPointerRecord {
  run_id: string;
}

/** A run's feedback summary, kept so a run posted after its feedback gets it back (traceRunKeys.feedbackStats). */
export interface FeedbackStatsRecord {
  run_id: string;
  seq: number;
  stats_seq?: number;
  stats_json?: string | null;
  extend?: boolean;
}

/** A thread id as a key part: itself, or a digest when long (DynamoDB keys are bounded; the id is any text). */
export function threadKey(thread: string): string {
  return thread.length <= 200 ? thread : `sha256:${createHash("sha256").update(thread).digest("hex")}`;
}

/** A thread of a project as its marker item keeps it (traceRunKeys.thread). */
export interface ThreadRecord {
  PK: string;
  SK: "thread";
  GSI3PK: string;
  GSI3SK: string;
  thread_id: string;
  session_id: string;
  first_start_time: string;
  last_start_time: string;
  expires_at: number;
}

/**
 * Whether an item read through an index is a run of `tenant` (its PK/SK are its id's), or a feedback on one:
 * an index's keys are plain attributes, so its readers trust an item by its primary key.
 */
export const isRunOf = (tenant: string) => (i: { PK?: string; SK?: string; id?: string }) =>
  i.SK === "run" && typeof i.id === "string" && i.PK === traceRunKeys.run(tenant, i.id).PK;
export const isFeedbackOf =
  (tenant: string) => (i: { PK?: string; SK?: string; id?: string; run_id?: string }) => {
    if (typeof i.id !== "string" || typeof i.run_id !== "string") return false;
    const k = traceRunKeys.feedback(tenant, i.run_id, i.id);
    return i.PK === k.PK && i.SK === k.SK;
  };

/**
 * The JSON fields of a run (inputs, outputs, extra, events, serialized, error): `<field>_json` holds the JSON
 * text inline, or `<field>_ref` the S3 key of the object it was offloaded to (the other one is null). Both
 * are absent for a field never sent.
 */
/** The run fields that hold JSON: stored inline as `<field>_json`, or in S3 under `<field>_ref` when large. */
export const JSON_FIELDS = ["inputs", "outputs", "extra", "events", "serialized", "error"] as const;
export type JsonField = (typeof JSON_FIELDS)[number];

export type RunJsonAttributes = { [F in JsonField as `${F}_json`]?: string | null } & {
  [F in JsonField as `${F}_ref`]?: string | null;
};

/** What ingestion computes from a run's merged content (shared/runs/derive.ts), again after each patch. */
export interface TraceRunDerived {
  /** "success", "error" or "pending". */
  status: string;
  first_token_time: string | null;
  /** The conversation thread from the run's metadata (shared/runs/derive.ts threadIdOf); absent on older runs. */
  thread_id?: string | null;
  // llm runs only:
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_token_details?: Record<string, number> | null;
  completion_token_details?: Record<string, number> | null;
  prompt_cost?: number | null;
  completion_cost?: number | null;
  total_cost?: number | null;
  prompt_cost_details?: Record<string, number> | null;
  completion_cost_details?: Record<string, number> | null;
  tokens_estimated?: boolean;
  /** JSON of {input_messages, output_messages}; left out (post) or null (patch) when over the inline limit. */
  messages_json?: string | null;
  format_errors?: string[];
}

/** A run as stored: the posted fields, its lineage, JSON fields, derived fields and patched values merged. */
export interface TraceRunRecord extends TraceRunDerived, RunJsonAttributes {
  id: string;
  tenant_id: string;
  /** The project. */
  session_id: string;
  name: string;
  run_type: string;
  start_time: string;
  end_time: string | null;
  tags: string[];
  dotted_order: string | null;
  reference_example_id: string | null;
  received_at: string;
  // lineage (shared/runs/lineage.ts)
  trace_id: string;
  parent_run_id: string | null;
  parent_run_ids: string[];
  is_root: boolean;
  /** The status a patch sent (the derived status falls back on it). */
  status_hint?: string;
  /** The retention tier (absent on runs stored before tiers existed). */
  trace_tier?: TraceTier;
  /** Epoch seconds after which DynamoDB TTL deletes the run: ingestion time plus its tier's retention. */
  expires_at?: number;
  /** JSON of FeedbackStats (shared/runs/feedback-stats.ts); the sequence number of the feedback it counts. */
  feedback_stats_json?: string | null;
  feedback_seq?: number;
}

/**
 * Past its retention: DynamoDB TTL deletes such an item within a day or two, and readers treat it as gone
 * already.
 */
export const isExpired = (item: { expires_at?: number }, nowMs = Date.now()): boolean =>
  typeof item.expires_at === "number" && item.expires_at * 1000 <= nowMs;

export type TraceTier = "longlived" | "shortlived";
export const TRACE_TIERS = ["longlived", "shortlived"] as const;

/** The feedback of a run summarized per key. */
export type FeedbackStats = Record<string, { n: number; avg: number | null; values: Record<string, number> }>;

/** The key and index attributes of a run item (queries answer with them). */
export type TraceRunKeys = {
  PK: string;
  SK: "run";
  GSI1PK: string;
  GSI1SK: string;
  GSI2PK: string;
  GSI2SK: string;
  /** A run with a thread id only (the index is sparse). */
  GSI3PK?: string;
  GSI3SK?: string;
};

/** A run item as ingestion writes it and the index queries read it. */
export type TraceRunItem = TraceRunRecord & TraceRunKeys;

/** The key and index attributes of a run, from its fields. */
export function traceRunKeysOf(
  r: Pick<TraceRunRecord, "tenant_id" | "id" | "session_id" | "start_time" | "trace_id" | "dotted_order"> & {
    thread_id?: string | null;
  },
): TraceRunKeys {
  return {
    ...(r.thread_id
      ? traceRunKeys.threadRuns(r.tenant_id, r.session_id, r.thread_id, r.start_time, r.id)
      : {}),
    ...traceRunKeys.run(r.tenant_id, r.id),
    GSI1PK: traceRunKeys.partition(r.tenant_id, r.session_id, dayOf(r.start_time), shardOf(r.id)),
    GSI1SK: `${r.start_time}#${r.id}`,
    GSI2PK: traceRunKeys.trace(r.tenant_id, r.trace_id),
    GSI2SK: r.dotted_order ?? `${r.start_time}#${r.id}`,
  };
}

export const traceRuns = repository<TraceRunRecord, { tenant: string; id: string }>({
  table: "runs",
  key: ({ tenant, id }) => traceRunKeys.run(tenant, id),
  keysOf: traceRunKeysOf,
});

/**
 * The patches of a run merged (each patch SETs its fields over the earlier ones): the patchable fields in
 * their stored form (times canonical, JSON fields inline or in S3, the status as status_hint).
 */
export interface TraceRunPatchRecord extends RunJsonAttributes {
  id: string;
  tenant_id: string;
  /** Written by ingestion for one project (a runtime's traces): applied only to a run of that project. */
  session_id?: string;
  end_time?: string | null;
  tags?: string[];
  status_hint?: string;
}
