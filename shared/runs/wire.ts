import { normalizeLlmIO } from "../llm/index.ts";
import type { JsonField, TraceRunRecord } from "../records/runs.ts";
import { attachmentUrls } from "./attachments.ts";
import { threadIdOf } from "./derive.ts";
import { loadField, loadFields } from "./payloads.ts";

// A stored run as the API returns it (the shape the langsmith SDK reads).
const TOKEN_FIELDS = [
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "prompt_token_details",
  "completion_token_details",
  "prompt_cost",
  "completion_cost",
  "total_cost",
  "prompt_cost_details",
  "completion_cost_details",
] as const;

/** Every field of a run as answered (llm runs alone have the last three); what `select` may name. */
export const RUN_FIELDS = [
  "id",
  "name",
  "run_type",
  "start_time",
  "end_time",
  "status",
  "inputs",
  "outputs",
  "error",
  "extra",
  "events",
  "serialized",
  "tags",
  "session_id",
  "trace_id",
  "thread_id",
  "dotted_order",
  "parent_run_id",
  "parent_run_ids",
  "is_root",
  "reference_example_id",
  "first_token_time",
  "feedback_stats",
  "trace_tier",
  "app_path",
  "s3_urls",
  ...TOKEN_FIELDS,
  "messages",
  "format_errors",
  "tokens_estimated",
] as const;
export type RunField = (typeof RUN_FIELDS)[number];

/** Where the web console shows the run: its trace, with the run opened (a path on the platform's origin). */
export const appPath = (run: { session_id: string; trace_id: string; id: string }) =>
  `/#/traces/${[run.session_id, "trace", run.trace_id, run.id].map(encodeURIComponent).join("/")}`;

/**
 * A stored run as answered. `fields: false` leaves the JSON fields out (not read from S3), `attachments:
 * false` its attachments' URLs (not read from its partition).
 */
export async function toWire(item: TraceRunRecord, opts: { fields?: boolean; attachments?: boolean } = {}) {
  const [content, s3Urls]: [Partial<Record<JsonField, unknown>>, Record<string, unknown> | undefined] =
    await Promise.all([
      opts.fields === false ? {} : loadFields(item),
      opts.attachments === false ? undefined : attachmentUrls(item.tenant_id, item.id),
    ]);
  const run: Record<string, unknown> = {
    id: item.id,
    name: item.name,
    run_type: item.run_type,
    start_time: item.start_time,
    end_time: item.end_time ?? null,
    status: item.status,
    inputs: content.inputs ?? {},
    outputs: content.outputs ?? null,
    error: content.error ?? null,
    extra: content.extra ?? null,
    events: content.events ?? [],
    serialized: content.serialized ?? null,
    tags: item.tags ?? [],
    session_id: item.session_id,
    trace_id: item.trace_id,
    // Runs stored before the thread was derived at ingestion have none: it is read from their metadata.
    thread_id:
      item.thread_id !== undefined
        ? item.thread_id
        : threadIdOf(opts.fields === false ? await loadField(item, "extra") : content.extra),
    dotted_order: item.dotted_order ?? null,
    parent_run_id: item.parent_run_id ?? null,
    parent_run_ids: item.parent_run_ids ?? [],
    is_root: item.is_root,
    reference_example_id: item.reference_example_id ?? null,
    first_token_time: item.first_token_time ?? null,
    feedback_stats: item.feedback_stats_json ? JSON.parse(item.feedback_stats_json) : null,
    trace_tier: item.trace_tier ?? null,
    app_path: appPath(item),
    s3_urls: s3Urls ?? {},
  };
  for (const f of TOKEN_FIELDS)
    run[f] = item[f] ?? (f.endsWith("details") ? null : f.endsWith("cost") ? null : 0);
  if (item.run_type === "llm") {
    const messages: { input_messages: unknown; output_messages: unknown } | undefined = item.messages_json
      ? JSON.parse(item.messages_json)
      : opts.fields === false
        ? undefined
        : normalizeLlmIO(content.inputs, content.outputs);
    run.messages = messages
      ? { input_messages: messages.input_messages, output_messages: messages.output_messages }
      : null;
    run.format_errors = item.format_errors ?? [];
    run.tokens_estimated = item.tokens_estimated ?? false;
  }
  return run;
}
