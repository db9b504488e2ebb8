import type {
  BaseCallbackHandler,
  HandleLLMNewTokenCallbackFields,
  NewTokenIndices,
} from "@langchain/core/callbacks/base";
import { AIMessageChunk } from "@langchain/core/messages";
import { GenerationChunk } from "@langchain/core/outputs";
import { BaseTracer, type Run } from "@langchain/core/tracers/base";
import { toJson } from "./serialize.ts";

// stream_mode "events": each LangChain callback of the graph run becomes an `events` frame whose data is an
// astream_events v2 event `{event, name, run_id, tags, metadata, data: {input|chunk|output|error}, parent_ids}`.
// The reference server (langgraph-api stream.mts) runs `graph.streamEvents(input, {version: "v2", runId})`, so
// every event comes from @langchain/core's EventStreamCallbackHandler, and forwards each one except the graph's
// own `on_chain_stream` (its stream-mode output, sent as the other modes' frames) and runs tagged
// `langsmith:hidden`; the first event's `data.input` is the raw run input and the graph's end event has no
// `data.input`. That handler is not a public export of @langchain/core, so this is a callback handler built
// the same way, added to the config of the worker's existing `graph.stream` call:
// - on_chain_start/end (graph, nodes, runnables; on_prompt_* for prompts), on_chat_model_start/stream/end,
//   on_llm_start/stream/end, on_tool_start/end/error, on_retriever_start/end, on_custom_event, and
//   on_<type>_stream for runnables whose output is streamed; data as the core handler builds it.
// - `parent_ids` (ancestors' run ids, root first) as the Python reference sends; JS core's v2 events lack it.
// - Like the core handler it is named `event_stream_tracer` (core taps streamed runnable outputs through the
//   handler of that name) and prefers streaming (chat models called with `invoke` stream their tokens).
// - Errors of chains and models make no event (v2 has none); the run's `error` frame reports the failure.
export interface StreamEventV2 {
  event: string;
  name: string;
  run_id: string;
  tags: string[];
  metadata: Record<string, unknown>;
  data: { input?: unknown; output?: unknown; chunk?: unknown; error?: unknown };
  parent_ids: string[];
}

export interface EventsModeOptions {
  /** The graph call's input as the client sent it: the first event's `data.input` (as the reference sends). */
  input?: unknown;
}

interface RunInfo {
  name: string;
  tags: string[];
  metadata: Record<string, unknown>;
  /** chain, prompt, chat_model, llm, tool, retriever: the event name's middle part. */
  type: string;
  inputs?: unknown;
  parentIds: string[];
}

const HIDDEN = "langsmith:hidden";

const nameOf = (run: Run): string => {
  const s = run.serialized as { name?: string; id?: string[] } | undefined;
  return run.name ?? s?.name ?? s?.id?.at(-1) ?? "Unnamed";
};

class EventsMode extends BaseTracer {
  name = "event_stream_tracer";
  lc_prefer_streaming = true;
  private readonly runs = new Map<string, RunInfo>();
  /** Runs whose streamed output is being reported: their end event waits for the last chunk. */
  private readonly taps = new Map<string, Promise<void>>();
  private root?: string;

  constructor(
    private readonly emit: (data: StreamEventV2) => void,
    private readonly options: EventsModeOptions = {},
  ) {
    // Awaited handlers keep events in callback order.
    super({ _awaitHandler: true });
  }

  protected persistRun(): Promise<void> {
    return Promise.resolve();
  }

  // The base class would keep every finished run under the root for the whole graph run.
  protected override _addChildRun(): void {}

  private start(run: Run, type: string, inputs: unknown, data: StreamEventV2["data"]): void {
    const parent = run.parent_run_id ? this.runs.get(run.parent_run_id) : undefined;
    const info: RunInfo = {
      name: nameOf(run),
      tags: run.tags ?? [],
      metadata: run.extra?.metadata ?? {},
      type,
      inputs,
      parentIds: parent ? [...parent.parentIds, run.parent_run_id!] : [],
    };
    this.runs.set(run.id, info);
    if (this.root === undefined) {
      this.root = run.id;
      if ("input" in this.options) data = { ...data, input: this.options.input };
    }
    this.send(`on_${type}_start`, run.id, info, data);
  }

  private send(
    event: string,
    runId: string,
    info: RunInfo,
    data: StreamEventV2["data"],
    name = info.name,
  ): void {
    if (info.tags.includes(HIDDEN)) return;
    const e = {
      event,
      name,
      run_id: runId,
      tags: info.tags,
      metadata: info.metadata,
      data,
      parent_ids: info.parentIds,
    };
    this.emit(toJson(e) as StreamEventV2);
  }

  /** The run's end event, after its last streamed chunk; the graph's own end event carries no input. */
  private end(runId: string, data: StreamEventV2["data"]): void {
    const info = this.runs.get(runId);
    if (!info) return;
    this.runs.delete(runId);
    if (runId === this.root) delete data.input;
    const send = () => this.send(`on_${info.type}_end`, runId, info, data);
    const tap = this.taps.get(runId);
    this.taps.delete(runId);
    if (tap) void tap.then(send);
    else send();
  }

  override async onChainStart(run: Run): Promise<void> {
    const inputs = run.inputs ?? {};
    // `{input: ""}` is a streamed runnable's placeholder: its input is known only at its end.
    if (inputs.input === "" && Object.keys(inputs).length === 1)
      this.start(run, run.run_type ?? "chain", {}, {});
    else {
      const input = inputs.input !== undefined ? inputs.input : inputs;
      this.start(run, run.run_type ?? "chain", input, { input });
    }
  }

  override async onChainEnd(run: Run): Promise<void> {
    // The run's inputs as core reported them (a chain's are a map).
    const inputs = (run.inputs ?? this.runs.get(run.id)?.inputs ?? {}) as Record<string, unknown>;
    const single = inputs.input && Object.keys(inputs).length === 1;
    this.end(run.id, { output: run.outputs?.output ?? run.outputs, input: single ? inputs.input : inputs });
  }

  override async onChainError(run: Run): Promise<void> {
    this.runs.delete(run.id);
  }

  override async onLLMStart(run: Run): Promise<void> {
    const type = run.inputs.messages !== undefined ? "chat_model" : "llm";
    this.start(run, type, run.inputs, { input: run.inputs });
  }

  // Tokens go straight out; the base class would also keep each one on the run until the model ends.
  override async handleLLMNewToken(
    token: string,
    _idx: NewTokenIndices,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    fields?: HandleLLMNewTokenCallbackFields,
  ): Promise<Run> {
    const run = this.getRunById(runId) as Run;
    const info = this.runs.get(runId);
    if (!info) return run;
    const given = fields?.chunk;
    if (info.type === "chat_model") {
      const message = given && "message" in given ? given.message : undefined;
      const chunk = message ?? new AIMessageChunk({ content: token, id: `run-${runId}` });
      this.send("on_chat_model_stream", runId, info, { chunk });
    } else this.send("on_llm_stream", runId, info, { chunk: given ?? new GenerationChunk({ text: token }) });
    return run;
  }

  override async onLLMEnd(run: Run): Promise<void> {
    const info = this.runs.get(run.id);
    if (!info) return;
    const generations: { message?: unknown; text?: string; generationInfo?: unknown }[][] =
      run.outputs?.generations ?? [];
    const output =
      info.type === "chat_model"
        ? generations.find((g) => g[0]?.message !== undefined)?.[0]?.message
        : {
            generations: generations.map((g) =>
              g.map((c) => ({ text: c.text, generationInfo: c.generationInfo })),
            ),
            llmOutput: run.outputs?.llmOutput ?? {},
          };
    this.end(run.id, { output, input: info.inputs });
  }

  override async onLLMError(run: Run): Promise<void> {
    this.runs.delete(run.id);
  }

  override async onToolStart(run: Run): Promise<void> {
    this.start(run, "tool", run.inputs ?? {}, { input: run.inputs ?? {} });
  }

  override async onToolEnd(run: Run): Promise<void> {
    const output = run.outputs?.output === undefined ? run.outputs : run.outputs.output;
    this.end(run.id, { output, input: this.runs.get(run.id)?.inputs });
  }

  override async onToolError(run: Run): Promise<void> {
    const info = this.runs.get(run.id);
    if (!info) return;
    this.runs.delete(run.id);
    this.send("on_tool_error", run.id, info, { input: info.inputs, error: run.error });
  }

  override async onRetrieverStart(run: Run): Promise<void> {
    const input = { query: run.inputs.query };
    this.start(run, "retriever", input, { input });
  }

  override async onRetrieverEnd(run: Run): Promise<void> {
    const output = run.outputs?.documents ?? run.outputs;
    this.end(run.id, { output, input: this.runs.get(run.id)?.inputs });
  }

  override async onRetrieverError(run: Run): Promise<void> {
    this.runs.delete(run.id);
  }

  /** `dispatchCustomEvent(name, data)` inside a run: `on_custom_event` named by the event, data as given. */
  override async handleCustomEvent(eventName: string, data: unknown, runId: string): Promise<void> {
    const info = this.runs.get(runId);
    // A custom event's data goes out as it was dispatched.
    if (info) this.send("on_custom_event", runId, info, data as StreamEventV2["data"], eventName);
  }

  /**
   * Core calls this for a runnable whose output is streamed: each chunk becomes `on_<type>_stream` (a tool's
   * or retriever's first chunk only, as core does). The graph's own chunks are its stream-mode output: skipped.
   */
  async *tapOutputIterable<T>(runId: string, output: AsyncGenerator<T>): AsyncGenerator<T> {
    // The run is registered by the time its first chunk arrives.
    const first = await output.next();
    if (first.done) return;
    const info = this.runs.get(runId);
    if (!info || this.taps.has(runId) || runId === this.root) {
      yield first.value;
      yield* output;
      return;
    }
    let done!: () => void;
    this.taps.set(runId, new Promise<void>((r) => (done = r)));
    const report = (chunk: T) =>
      this.send(`on_${info.type}_stream`, runId, info, {
        chunk:
          info.type === "llm" && typeof chunk === "string" ? new GenerationChunk({ text: chunk }) : chunk,
      });
    try {
      report(first.value);
      yield first.value;
      for await (const chunk of output) {
        if (info.type !== "tool" && info.type !== "retriever") report(chunk);
        yield chunk;
      }
    } finally {
      done();
    }
  }
}

/** A CallbackManager (of any copy of @langchain/core): the callbacks a config may carry instead of a list. */
interface CallbackManagerLike {
  copy(): CallbackManagerLike;
  addHandler(handler: BaseCallbackHandler, inherit?: boolean): void;
}
const isCallbackManager = (c: unknown): c is CallbackManagerLike => {
  const m = c as { copy?: unknown; addHandler?: unknown } | null | undefined;
  return typeof m?.copy === "function" && typeof m?.addHandler === "function";
};

/** The callback handler that reports a graph run as `events` frames: add it to the graph call's callbacks. */
function eventsCallback(emit: (data: StreamEventV2) => void, options?: EventsModeOptions): EventsMode {
  return new EventsMode(emit, options);
}

/**
 * The worker's wiring for stream_mode "events": the handler joins the graph call's callbacks and the graph's
 * root run takes the agent run's id (the reference passes `runId: run_id`, so `run_id` of the graph's events
 * is the agent run's id).
 */
export function attachEventsMode(
  config: { callbacks?: unknown; runId?: unknown },
  wiring: { runId: string; input: unknown; emit: (data: StreamEventV2) => void },
): EventsMode {
  const handler = eventsCallback(wiring.emit, { input: wiring.input });
  const cbs = config.callbacks;
  if (isCallbackManager(cbs)) {
    const copy = cbs.copy();
    copy.addHandler(handler, true);
    config.callbacks = copy;
  } else config.callbacks = [...(Array.isArray(cbs) ? cbs : []), handler];
  config.runId ??= wiring.runId;
  return handler;
}
