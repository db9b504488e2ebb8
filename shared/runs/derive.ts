import { firstTokenTime, type PriceEntry, summarizeLlmRun } from "../llm/index.ts";
import type { TraceRunDerived } from "../records/runs.ts";
import { canonicalTime } from "../time.ts";

// Fields computed from a run's merged content: status, time to first token, and for llm runs the
// normalized messages, tokens and costs (with the prices in force when the run was logged).
export interface RunContent {
  run_type: string;
  start_time?: string;
  end_time?: string | null;
  status?: string | null;
  inputs?: unknown;
  outputs?: unknown;
  error?: unknown;
  extra?: unknown;
  events?: unknown;
}

export function statusOf(run: RunContent): string {
  if (run.error !== undefined && run.error !== null && run.error !== "") return "error";
  if (run.end_time) return "success";
  if (run.status === "error" || run.status === "success") return run.status;
  return "pending";
}

/** The metadata keys that put a run in a conversation thread, in the order the first present one wins. */
export const THREAD_KEYS = ["session_id", "thread_id", "conversation_id"] as const;

/** A run's thread: the first of THREAD_KEYS in its `extra.metadata` with a non-empty string or number value. */
export function threadIdOf(extra: unknown): string | null {
  const metadata = (extra as { metadata?: unknown } | null | undefined)?.metadata;
  if (!metadata || typeof metadata !== "object") return null;
  for (const key of THREAD_KEYS) {
    const v = (metadata as Record<string, unknown>)[key];
    if ((typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v)))
      return String(v);
  }
  return null;
}

export function deriveFields(run: RunContent, prices: readonly PriceEntry[]): TraceRunDerived {
  const ftt = firstTokenTime(run.events);
  const derived: TraceRunDerived = {
    status: statusOf(run),
    first_token_time: ftt ? (canonicalTime(ftt) ?? ftt) : null,
    thread_id: threadIdOf(run.extra),
  };
  if (run.run_type !== "llm") return derived;
  const s = summarizeLlmRun(
    {
      inputs: run.inputs,
      outputs: run.outputs,
      extra: run.extra as Record<string, unknown>,
      start_time: run.start_time,
    } as never,
    prices,
  );
  return {
    ...derived,
    prompt_tokens: s.prompt_tokens,
    completion_tokens: s.completion_tokens,
    total_tokens: s.total_tokens,
    prompt_token_details: s.prompt_token_details,
    completion_token_details: s.completion_token_details,
    prompt_cost: s.prompt_cost,
    completion_cost: s.completion_cost,
    total_cost: s.total_cost,
    prompt_cost_details: s.prompt_cost_details,
    completion_cost_details: s.completion_cost_details,
    tokens_estimated: s.tokens_estimated,
    messages_json: JSON.stringify({ input_messages: s.input_messages, output_messages: s.output_messages }),
    format_errors: s.format_errors,
  };
}
