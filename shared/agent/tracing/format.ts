import type { Run } from "@langchain/core/tracers/base";
import { normalizeLlmIO, vendorUsage } from "../../llm/index.ts";
import { toJson } from "../stream/serialize.ts";

// A LangChain tracer run as the body the trace ingestion takes (what the langsmith SDK posts): JSON-safe
// values, lineage (trace_id, dotted_order, parent), and for llm runs inputs/outputs in the platform's
// message format, so tokens, costs and first_token_time are derived from them exactly as for SDK traces.
export type RunBody = Record<string, unknown>;

const iso = (ms: number) => new Date(ms).toISOString();

/** The fields known when a run starts: what `POST /runs` carries. */
export function createBody(run: Run, sessionId: string): RunBody {
  const body: RunBody = {
    id: run.id,
    name: run.name,
    run_type: run.run_type,
    start_time: startTime(run),
    inputs: runInputs(run),
    extra: toJson(run.extra ?? {}),
    events: toJson(run.events ?? []),
    tags: run.tags ?? [],
    trace_id: run.trace_id ?? run.id,
    dotted_order: run.dotted_order,
    parent_run_id: run.parent_run_id ?? null,
    session_id: sessionId,
  };
  return run.end_time === undefined ? body : { ...body, ...endBody(run) };
}

/** The fields known when a run ends: what `PATCH /runs/{id}` carries. */
export function endBody(run: Run): RunBody {
  // A start time carries microseconds; an end within the same millisecond must not precede it.
  const end = run.end_time ?? Date.now();
  const body: RunBody = {
    end_time: end > run.start_time ? iso(end) : startTime(run),
    inputs: runInputs(run),
    outputs: run.outputs === undefined ? null : runOutputs(run),
    extra: toJson(run.extra ?? {}),
    events: toJson(run.events ?? []),
    tags: run.tags ?? [],
  };
  if (run.error !== undefined && run.error !== null) body.error = run.error;
  return body;
}

const startTime = (run: Run) => run._serialized_start_time ?? iso(run.start_time);

function runInputs(run: Run): unknown {
  const json = toJson(run.inputs ?? {});
  if (run.run_type !== "llm") return json;
  const { input_messages, format_errors } = normalizeLlmIO(json, undefined);
  // What the converter cannot read stays in the LangChain encoding, which the platform reads as well.
  return format_errors.length ? json : { messages: input_messages };
}

function runOutputs(run: Run): unknown {
  const json = toJson(run.outputs);
  if (run.run_type !== "llm") return json;
  const { output_messages, format_errors } = normalizeLlmIO(undefined, json);
  if (format_errors.length) return json;
  // LangChain puts usage on the reply message; older integrations only report it in llmOutput.
  const llmOutput = (json as { llmOutput?: Record<string, unknown> } | null)?.llmOutput;
  const usage =
    output_messages.findLast((m) => m.usage_metadata)?.usage_metadata ??
    vendorUsage(llmOutput?.tokenUsage ?? llmOutput?.estimatedTokenUsage) ??
    undefined;
  return { messages: output_messages, ...(usage ? { usage_metadata: usage } : {}) };
}
