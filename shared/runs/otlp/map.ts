import { MAX_RUN_TAGS } from "../../platform/list-bounds.ts";
import {
  type ChatMessage,
  indexedMessages,
  parsed,
  semconvMessages,
  vercelMessages,
  vercelResponse,
} from "./messages.ts";
import { type Attributes, type AttrValue, type OtlpSpan, setOwn } from "./model.ts";

// One OTLP span → one run as POST /runs/batch takes it (shared/runs/schema.ts RunCreate), in the LLM trace
// format's fields: llm runs carry inputs/outputs messages, extra.metadata.usage_metadata and ls_model_name /
// ls_provider (tokens and costs come from them as for SDK-sent runs), a `new_token` event for time to first token.
// Conventions read: langsmith's own (langsmith.*), OpenTelemetry GenAI (gen_ai.*), OpenLLMetry (traceloop.*,
// llm.*), the Vercel AI SDK (ai.*). Attributes no convention maps are kept in extra.metadata, bounded.

/** Run id of a span: its 8 bytes zero-padded into a UUID, as langsmith's exporter and `traceable` derive it. */
export const uuidOfSpanId = (hex: string) => `00000000-0000-0000-${hex.slice(0, 4)}-${hex.slice(4, 16)}`;
/** Trace id of a span's trace: its 16 bytes as a UUID. */
export const uuidOfTraceId = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_TYPES = ["tool", "chain", "llm", "retriever", "embedding", "prompt", "parser"];
const AI_SDK_LLM = /^ai\.(generateText|streamText|generateObject|streamObject)\.(doGenerate|doStream)$/;
const AI_SDK_EMBED = /^ai\.(embed|embedMany)\.doEmbed$/;
/** Span events whose time is the first streamed token. */
const FIRST_TOKEN_EVENTS = new Set([
  "ai.stream.firstChunk",
  "new_token",
  "first_token",
  "gen_ai.first_token",
]);

/** Bounds on what unmapped attributes add to extra.metadata. */
export const MAX_METADATA_KEYS = 256;
export const MAX_METADATA_VALUE_CHARS = 16_384;
const MAX_EVENTS = 256;

export interface SpanRun {
  id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order?: string;
  name: string;
  run_type: string;
  start_time: string;
  end_time: string | null;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown> | null;
  error: string | null;
  extra: { metadata: Record<string, unknown>; invocation_params?: Record<string, unknown> };
  events: { name: string; time: string; kwargs?: Record<string, unknown> }[];
  tags: string[];
  session_name?: string;
  session_id?: string;
  reference_example_id?: string;
}

/** A span's id fields as OTLP requires them: non-zero trace and span ids, a parent id absent or 8 bytes. */
export function spanIdsValid(s: OtlpSpan): boolean {
  const nonZero = (h: string) => /[1-9a-f]/.test(h);
  return (
    /^[0-9a-f]{32}$/.test(s.traceId) &&
    nonZero(s.traceId) &&
    /^[0-9a-f]{16}$/.test(s.spanId) &&
    nonZero(s.spanId) &&
    (s.parentSpanId === "" || /^[0-9a-f]{16}$/.test(s.parentSpanId))
  );
}

/** Nanoseconds since the epoch → ISO time with microseconds (what the runs store keeps). */
export function isoOfNanos(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const micros = String((ns / 1000n) % 1000n).padStart(3, "0");
  return `${new Date(ms).toISOString().slice(0, -1)}${micros}Z`;
}

/** Reads attributes and remembers which were read, so the rest can go to metadata. */
class Attrs {
  readonly used = new Set<string>();
  constructor(readonly all: Attributes) {}
  get(key: string): AttrValue | undefined {
    if (!Object.hasOwn(this.all, key)) return undefined;
    this.used.add(key);
    return this.all[key];
  }
  str(...keys: string[]): string | undefined {
    for (const k of keys) {
      const v = this.get(k);
      if (typeof v === "string" && v !== "") return v;
    }
    return undefined;
  }
  num(...keys: string[]): number | undefined {
    for (const k of keys) {
      const v = this.get(k);
      const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
      if (typeof n === "number" && Number.isFinite(n)) return n;
    }
    return undefined;
  }
  /** Every attribute under `prefix.`, by the rest of its key. */
  prefixed(prefix: string): [string, AttrValue][] {
    return Object.entries(this.all)
      .filter(([k]) => k.startsWith(`${prefix}.`) && k.length > prefix.length + 1)
      .map(([k, v]) => {
        this.used.add(k);
        return [k.slice(prefix.length + 1), v];
      });
  }
}

function runTypeOf(a: Attrs): string {
  const kind = a.str("langsmith.span.kind")?.toLowerCase();
  if (kind && RUN_TYPES.includes(kind)) return kind;
  const op = a.str("ai.operationId");
  if (op) {
    if (AI_SDK_LLM.test(op)) return "llm";
    if (AI_SDK_EMBED.test(op)) return "embedding";
    if (op === "ai.toolCall") return "tool";
    return "chain";
  }
  const genAiOp = a.str("gen_ai.operation.name");
  if (genAiOp) {
    if (["chat", "text_completion", "completion", "generate_content"].includes(genAiOp)) return "llm";
    if (genAiOp === "embeddings" || genAiOp === "embedding") return "embedding";
    if (genAiOp === "execute_tool") return "tool";
    if (RUN_TYPES.includes(genAiOp)) return genAiOp;
  }
  const traceloop = a.str("traceloop.span.kind");
  if (traceloop === "tool") return "tool";
  const requestType = a.str("llm.request.type");
  if (requestType === "chat" || requestType === "completion") return "llm";
  if (requestType === "embedding") return "embedding";
  if (traceloop) return "chain";
  const model = a.all["gen_ai.request.model"] ?? a.all["gen_ai.response.model"];
  const usage = a.all["gen_ai.usage.input_tokens"] ?? a.all["gen_ai.usage.prompt_tokens"];
  return model !== undefined || usage !== undefined ? "llm" : "chain";
}

/** A value as a run's inputs/outputs object: objects as they are, anything else under `key`. */
function asObject(v: unknown, key: string): Record<string, unknown> {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  return { [key]: v };
}

const withSystem = (system: string | undefined, messages: ChatMessage[]) =>
  system ? [{ role: "system", content: system }, ...messages] : messages;

function inputsOf(a: Attrs, s: OtlpSpan): Record<string, unknown> {
  const system = a.str("gen_ai.system_instructions");
  const semconv = semconvMessages(parsed(a.get("gen_ai.input.messages")));
  if (semconv) return { messages: withSystem(system, semconv) };
  const vercel = vercelMessages(parsed(a.get("ai.prompt.messages")));
  if (vercel) return { messages: vercel };
  const indexed = indexedMessages(a.all, "prompt");
  for (const k of indexed.used) a.used.add(k);
  if (indexed.messages.length) return { messages: withSystem(system, indexed.messages) };
  for (const key of ["gen_ai.prompt", "ai.prompt", "ai.toolCall.args", "ai.toolCall.input"]) {
    const v = a.get(key);
    if (v === undefined) continue;
    const p = parsed(v);
    const o = asObject(p, "input");
    if (key === "ai.prompt" && Array.isArray(o.messages))
      return { ...o, messages: vercelMessages(o.messages) };
    return o;
  }
  const entity = parsed(a.get("traceloop.entity.input"));
  if (entity !== undefined) {
    const o = asObject(entity, "input");
    return typeof o.inputs === "object" && o.inputs !== null && !Array.isArray(o.inputs)
      ? (o.inputs as Record<string, unknown>)
      : o;
  }
  const fromEvents = eventMessages(s, "input");
  if (fromEvents.length) return { messages: fromEvents };
  return {};
}

function outputsOf(a: Attrs, s: OtlpSpan): Record<string, unknown> | null {
  const semconv = semconvMessages(parsed(a.get("gen_ai.output.messages")));
  if (semconv) return { messages: semconv };
  const object = a.get("ai.response.object");
  if (object !== undefined) return asObject(parsed(object), "output");
  const vercel = vercelResponse(a.get("ai.response.text"), a.get("ai.response.toolCalls"));
  if (vercel) return { messages: [vercel] };
  const indexed = indexedMessages(a.all, "completion");
  for (const k of indexed.used) a.used.add(k);
  if (indexed.messages.length) return { messages: indexed.messages };
  for (const key of ["gen_ai.completion", "ai.toolCall.result", "ai.toolCall.output"]) {
    const v = a.get(key);
    if (v !== undefined) return asObject(parsed(v), "output");
  }
  const entity = parsed(a.get("traceloop.entity.output"));
  if (entity !== undefined) return asObject(entity, "output");
  const fromEvents = eventMessages(s, "output");
  if (fromEvents.length) return { messages: fromEvents };
  return null;
}

/** Messages of the span events of older GenAI conventions (gen_ai.content.*, gen_ai.<role>.message, gen_ai.choice). */
function eventMessages(s: OtlpSpan, side: "input" | "output"): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const e of s.events) {
    const role = /^gen_ai\.(system|user|assistant|tool)\.message$/.exec(e.name)?.[1];
    if (side === "input" && role) out.push({ role, content: parsed(e.attributes.content) ?? "" });
    else if (
      side === "input" &&
      e.name === "gen_ai.content.prompt" &&
      e.attributes["gen_ai.prompt"] !== undefined
    )
      out.push({ role: "user", content: parsed(e.attributes["gen_ai.prompt"]) });
    else if (
      side === "output" &&
      e.name === "gen_ai.content.completion" &&
      e.attributes["gen_ai.completion"] !== undefined
    )
      out.push({ role: "assistant", content: parsed(e.attributes["gen_ai.completion"]) });
    else if (side === "output" && e.name === "gen_ai.choice") {
      const m = parsed(e.attributes.message);
      out.push(
        typeof m === "object" && m !== null
          ? { role: "assistant", ...m }
          : { role: "assistant", content: m ?? "" },
      );
    }
  }
  return out;
}

function usageOf(a: Attrs): Record<string, unknown> | undefined {
  const reported = parsed(a.get("langsmith.usage_metadata"));
  const input = a.num(
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "ai.usage.inputTokens",
    "ai.usage.promptTokens",
    "llm.usage.prompt_tokens",
  );
  const output = a.num(
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "ai.usage.outputTokens",
    "ai.usage.completionTokens",
    "llm.usage.completion_tokens",
  );
  const total = a.num(
    "gen_ai.usage.total_tokens",
    "llm.usage.total_tokens",
    "ai.usage.totalTokens",
    "ai.usage.tokens",
  );
  const cacheRead = a.num(
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "ai.usage.inputTokenDetails.cacheReadTokens",
    "ai.usage.cachedInputTokens",
  );
  const cacheWrite = a.num(
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "ai.usage.inputTokenDetails.cacheWriteTokens",
  );
  const reasoning = a.num(
    "gen_ai.usage.reasoning_tokens",
    "ai.usage.outputTokenDetails.reasoningTokens",
    "ai.usage.reasoningTokens",
  );
  if (typeof reported === "object" && reported !== null && !Array.isArray(reported))
    return reported as Record<string, unknown>;
  if (input === undefined && output === undefined && total === undefined) return undefined;
  const inputDetails = {
    ...(cacheRead !== undefined ? { cache_read: cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cache_creation: cacheWrite } : {}),
  };
  return {
    ...(input !== undefined ? { input_tokens: input } : {}),
    ...(output !== undefined ? { output_tokens: output } : {}),
    ...(total !== undefined
      ? { total_tokens: total }
      : input !== undefined && output !== undefined
        ? { total_tokens: input + output }
        : {}),
    ...(Object.keys(inputDetails).length ? { input_token_details: inputDetails } : {}),
    ...(reasoning !== undefined ? { output_token_details: { reasoning } } : {}),
  };
}

const INVOCATION_PARAMS: [string, string[]][] = [
  ["temperature", ["gen_ai.request.temperature", "ai.settings.temperature", "llm.request.temperature"]],
  [
    "max_tokens",
    [
      "gen_ai.request.max_tokens",
      "ai.settings.maxOutputTokens",
      "ai.settings.maxTokens",
      "llm.request.max_tokens",
    ],
  ],
  ["top_p", ["gen_ai.request.top_p", "ai.settings.topP", "llm.request.top_p"]],
  ["top_k", ["gen_ai.request.top_k", "ai.settings.topK"]],
  ["frequency_penalty", ["gen_ai.request.frequency_penalty", "ai.settings.frequencyPenalty"]],
  ["presence_penalty", ["gen_ai.request.presence_penalty", "ai.settings.presencePenalty"]],
  ["seed", ["gen_ai.request.seed", "ai.settings.seed"]],
];

function invocationParams(a: Attrs, model: string | undefined) {
  const params: Record<string, unknown> = {};
  for (const [name, keys] of INVOCATION_PARAMS) {
    const v = a.num(...keys);
    if (v !== undefined) params[name] = v;
  }
  const stop = a.get("gen_ai.request.stop_sequences") ?? a.get("ai.settings.stopSequences");
  if (stop !== undefined) params.stop = parsed(stop);
  if (model) params.model = model;
  return params;
}

/** Provider name: the Vercel provider id's first part ("openai.chat", also its gen_ai.system), else the GenAI one. */
function providerOf(a: Attrs): string | undefined {
  const vercel = a.str("ai.model.provider")?.split(".")[0];
  const genAi = a.str("gen_ai.provider.name", "gen_ai.system");
  return vercel || genAi;
}

/** Time to first token: a first-token event, else the Vercel AI SDK's ms from the span's start. */
function firstTokenEvent(a: Attrs, s: OtlpSpan): string | undefined {
  const e = s.events.find((ev) => FIRST_TOKEN_EVENTS.has(ev.name) && ev.timeUnixNano > 0n);
  if (e) return isoOfNanos(e.timeUnixNano);
  const ms = a.num("ai.response.msToFirstChunk", "ai.stream.msToFirstChunk");
  if (ms === undefined || ms < 0) return undefined;
  return isoOfNanos(s.startTimeUnixNano + BigInt(Math.round(ms * 1_000_000)));
}

function errorOf(s: OtlpSpan): string | null {
  if (s.status.code !== 2) return null;
  const ex = s.events.find((e) => e.name === "exception");
  if (ex) {
    const type = ex.attributes["exception.type"];
    const msg = ex.attributes["exception.message"];
    const stack = ex.attributes["exception.stacktrace"];
    const head = [type, msg].filter((x) => typeof x === "string" && x !== "").join(": ");
    const text = [head || s.status.message, typeof stack === "string" ? stack : ""]
      .filter(Boolean)
      .join("\n\n");
    if (text) return text;
  }
  return s.status.message || "Error";
}

function tagsOf(v: AttrValue | undefined): string[] {
  const list = Array.isArray(v) ? v.map(String) : typeof v === "string" ? v.split(",") : [];
  return list
    .map((t) => t.trim())
    .filter(Boolean)
    .slice(0, MAX_RUN_TAGS);
}

/** A metadata value within the bound: long strings and big structures are clipped to text. */
function bounded(v: unknown): unknown {
  if (typeof v === "string")
    return v.length > MAX_METADATA_VALUE_CHARS ? `${v.slice(0, MAX_METADATA_VALUE_CHARS)}…` : v;
  if (typeof v !== "object" || v === null) return v;
  const text = JSON.stringify(v);
  return text.length > MAX_METADATA_VALUE_CHARS ? `${text.slice(0, MAX_METADATA_VALUE_CHARS)}…` : v;
}

const metadataValue = (v: AttrValue) => (typeof v === "string" ? parsed(v) : v);

export interface MapOptions {
  /** The Langsmith-Project header: every span's project, whatever its attributes say. */
  project?: string;
}

export function spanToRun(s: OtlpSpan, opts: MapOptions = {}): SpanRun {
  const a = new Attrs(s.attributes);
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of a.prefixed("langsmith.metadata")) setOwn(metadata, k, metadataValue(v));
  let sessionName = a.str("langsmith.trace.session_name");
  let sessionId = a.str("langsmith.trace.session_id");
  let runName = a.str("langsmith.trace.name");
  for (const [k, v] of a.prefixed("ai.telemetry.metadata")) {
    if (k === "ls_project_name" && typeof v === "string") sessionName ??= v;
    else if (k === "ls_project_id" && typeof v === "string") sessionId ??= v;
    else if (k === "ls_run_name" && typeof v === "string") runName ??= v;
    else setOwn(metadata, k, metadataValue(v));
  }
  const runType = runTypeOf(a);
  if (metadata.ls_run_name !== undefined) {
    runName ??= String(metadata.ls_run_name);
    delete metadata.ls_run_name;
  }
  if (runType === "tool") runName ??= a.str("ai.toolCall.name", "gen_ai.tool.name");
  runName ??= a.str("traceloop.entity.name");

  const model = a.str("gen_ai.response.model", "gen_ai.request.model", "ai.response.model", "ai.model.id");
  const provider = providerOf(a);
  if (model && metadata.ls_model_name === undefined) metadata.ls_model_name = model;
  if (provider && metadata.ls_provider === undefined) metadata.ls_provider = provider;
  const params = invocationParams(a, model);
  if (params.temperature !== undefined) metadata.ls_temperature ??= params.temperature;
  if (params.max_tokens !== undefined) metadata.ls_max_tokens ??= params.max_tokens;
  const usage = usageOf(a);
  if (usage) metadata.usage_metadata = usage;

  const inputs = inputsOf(a, s);
  const outputs = outputsOf(a, s);
  const ttft = firstTokenEvent(a, s);
  const tags = tagsOf(a.get("langsmith.span.tags"));

  const ownId = a.str("langsmith.span.id");
  const ownTrace = a.str("langsmith.trace.id");
  const ownParent = a.str("langsmith.span.parent_id");
  const dotted = a.str("langsmith.span.dotted_order");
  const isRoot = a.get("langsmith.is_root");
  const example = a.str("langsmith.reference_example_id");
  // Read by langsmith's own span processor only, or mapped above under another name.
  for (const k of [
    "langsmith.traceable",
    "langsmith.traceable_parent_otel_span_id",
    "gen_ai.operation.name",
    "ai.operationId",
    "ai.model.provider",
    "ai.response.msToFirstChunk",
  ])
    a.get(k);

  const rest: [string, AttrValue][] = [
    ...Object.entries(s.attributes).filter(([k]) => !a.used.has(k)),
    ...Object.entries(s.resource).filter(([k]) => !Object.hasOwn(s.attributes, k)),
  ];
  let dropped = 0;
  for (const [k, v] of rest) {
    if (Object.hasOwn(metadata, k)) continue;
    if (Object.keys(metadata).length >= MAX_METADATA_KEYS) dropped++;
    else setOwn(metadata, k, bounded(v));
  }
  if (s.links.length)
    metadata["otel.links"] = bounded(
      s.links.map((l) => ({ trace_id: l.traceId, span_id: l.spanId, attributes: l.attributes })),
    );
  if (dropped) metadata["otel.dropped_attributes"] = dropped;

  const events: SpanRun["events"] = [];
  if (ttft) events.push({ name: "new_token", time: ttft });
  for (const e of s.events.slice(0, MAX_EVENTS))
    events.push({
      name: e.name || "event",
      time: isoOfNanos(e.timeUnixNano || s.startTimeUnixNano),
      kwargs: bounded(e.attributes) as Record<string, unknown>,
    });

  const parent =
    isRoot === true || isRoot === "true"
      ? null
      : ownParent && UUID.test(ownParent)
        ? ownParent
        : s.parentSpanId
          ? uuidOfSpanId(s.parentSpanId)
          : null;
  const start = s.startTimeUnixNano || s.endTimeUnixNano;
  return {
    id: ownId && UUID.test(ownId) ? ownId.toLowerCase() : uuidOfSpanId(s.spanId),
    trace_id: ownTrace && UUID.test(ownTrace) ? ownTrace.toLowerCase() : uuidOfTraceId(s.traceId),
    parent_run_id: parent?.toLowerCase() ?? null,
    ...(dotted ? { dotted_order: dotted } : {}),
    name: (runName ?? s.name ?? "").slice(0, 2048) || "span",
    run_type: runType,
    start_time: start ? isoOfNanos(start) : new Date().toISOString(),
    end_time: s.endTimeUnixNano ? isoOfNanos(s.endTimeUnixNano) : null,
    inputs,
    outputs,
    error: errorOf(s),
    extra: { metadata, ...(Object.keys(params).length ? { invocation_params: params } : {}) },
    events,
    tags,
    ...(opts.project
      ? { session_name: opts.project }
      : sessionId && UUID.test(sessionId)
        ? { session_id: sessionId.toLowerCase() }
        : sessionName
          ? { session_name: sessionName }
          : {}),
    ...(example && UUID.test(example) ? { reference_example_id: example.toLowerCase() } : {}),
  };
}
