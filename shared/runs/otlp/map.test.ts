import { describe, expect, it } from "vitest";
import { summarizeLlmRun } from "../../llm/index.ts";
import { RunCreate } from "../schema.ts";
import {
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE_CHARS,
  spanToRun,
  uuidOfSpanId,
  uuidOfTraceId,
} from "./map.ts";
import type { Attributes, OtlpSpan } from "./model.ts";

const START = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z
const span = (attributes: Attributes, more: Partial<OtlpSpan> = {}): OtlpSpan => ({
  traceId: "0af7651916cd43dd8448eb211c80319c",
  spanId: "b7ad6b7169203331",
  parentSpanId: "",
  name: "span",
  kind: 1,
  startTimeUnixNano: START,
  endTimeUnixNano: START + 1_500_000_000n,
  attributes,
  events: [],
  links: [],
  status: { code: 0, message: "" },
  resource: {},
  scope: { name: "", version: "" },
  ...more,
});
const summary = (run: ReturnType<typeof spanToRun>) => summarizeLlmRun(run as never, []);

describe("span → run", () => {
  it("ids: the span id as langsmith's exporter and traceable make run ids, the trace id as a UUID, the parent's", () => {
    const run = spanToRun(span({}, { parentSpanId: "00f067aa0ba902b7" }));
    // langsmith's getUuidFromOtelSpanId / getUuidFromOtelTraceId (lib/experimental/otel/utils, not exported).
    expect(run.id).toBe("00000000-0000-0000-b7ad-6b7169203331");
    expect(uuidOfSpanId("b7ad6b7169203331")).toBe(run.id);
    expect(run.trace_id).toBe("0af76519-16cd-43dd-8448-eb211c80319c");
    expect(uuidOfTraceId("0af7651916cd43dd8448eb211c80319c")).toBe(run.trace_id);
    expect(run.parent_run_id).toBe("00000000-0000-0000-00f0-67aa0ba902b7");
    expect(run.start_time).toBe("2026-01-01T00:00:00.000000Z");
    expect(run.end_time).toBe("2026-01-01T00:00:01.500000Z");
    expect(RunCreate.safeParse(run).success).toBe(true);
  });

  it("GenAI conventions: an llm run with messages, usage, model, provider and request parameters", () => {
    const run = spanToRun(
      span({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 100,
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.system_instructions": "Be brief.",
        "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Hi" }] }]),
        "gen_ai.output.messages": JSON.stringify([
          {
            role: "assistant",
            parts: [{ type: "tool_call", id: "c1", name: "get_weather", arguments: { city: "Paris" } }],
            finish_reason: "tool_call",
          },
        ]),
      }),
    );
    expect(run.run_type).toBe("llm");
    expect(run.extra.metadata).toMatchObject({
      ls_model_name: "gpt-4o-2024-08-06",
      ls_provider: "openai",
      ls_temperature: 0.2,
      ls_max_tokens: 100,
      usage_metadata: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
    });
    expect(run.extra.invocation_params).toMatchObject({ temperature: 0.2, max_tokens: 100 });
    const s = summary(run);
    expect(s.format_errors).toEqual([]);
    expect(s.input_messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(s.output_messages[0]!.content).toContainEqual(
      expect.objectContaining({ type: "tool_call", name: "get_weather", args: { city: "Paris" } }),
    );
    expect([s.prompt_tokens, s.completion_tokens, s.tokens_estimated]).toEqual([12, 3, false]);
  });

  it("OpenLLMetry: indexed prompt/completion attributes, total tokens, entity input/output on workflow spans", () => {
    const llm = spanToRun(
      span({
        "llm.request.type": "chat",
        "gen_ai.system": "Anthropic",
        "gen_ai.request.model": "claude-3-5-sonnet",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "You add.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "1+1?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "2",
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.usage.prompt_tokens": 9,
        "gen_ai.usage.completion_tokens": 1,
        "llm.usage.total_tokens": 10,
      }),
    );
    expect(llm.run_type).toBe("llm");
    const s = summary(llm);
    expect(s.input_messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(s.output_messages[0]!.content).toEqual([{ type: "text", text: "2" }]);
    expect(s.total_tokens).toBe(10);
    expect(llm.extra.metadata["gen_ai.prompt.0.role"]).toBeUndefined();
    const workflow = spanToRun(
      span({
        "traceloop.span.kind": "workflow",
        "traceloop.entity.name": "joke_workflow",
        "traceloop.entity.input": JSON.stringify({ inputs: { topic: "cats" } }),
        "traceloop.entity.output": JSON.stringify("a joke"),
      }),
    );
    expect(workflow).toMatchObject({
      run_type: "chain",
      name: "joke_workflow",
      inputs: { topic: "cats" },
      outputs: { output: "a joke" },
    });
  });

  it("Vercel AI SDK: doStream is an llm run with its messages, tool calls, usage and time to first token", () => {
    const run = spanToRun(
      span({
        "ai.operationId": "ai.streamText.doStream",
        "operation.name": "ai.streamText.doStream my-fn",
        "ai.model.id": "gpt-4o-mini",
        "ai.model.provider": "openai.chat",
        "gen_ai.system": "openai.chat",
        "ai.prompt.messages": JSON.stringify([
          { role: "system", content: "Help." },
          { role: "user", content: [{ type: "text", text: "Weather?" }] },
        ]),
        "ai.response.text": "Checking.",
        "ai.response.toolCalls": JSON.stringify([
          { toolCallId: "t1", toolName: "weather", input: '{"city":"Oslo"}' },
        ]),
        "ai.usage.inputTokens": 20,
        "ai.usage.outputTokens": 5,
        "ai.response.msToFirstChunk": 250.5,
        "ai.telemetry.metadata.user": "u1",
        "ai.telemetry.functionId": "my-fn",
      }),
    );
    expect(run.run_type).toBe("llm");
    expect(run.extra.metadata).toMatchObject({
      ls_model_name: "gpt-4o-mini",
      ls_provider: "openai",
      user: "u1",
      "operation.name": "ai.streamText.doStream my-fn",
      "ai.telemetry.functionId": "my-fn",
      usage_metadata: { input_tokens: 20, output_tokens: 5, total_tokens: 25 },
    });
    expect(run.events[0]).toEqual({ name: "new_token", time: "2026-01-01T00:00:00.250500Z" });
    const s = summary(run);
    expect(s.format_errors).toEqual([]);
    expect(s.input_messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(s.output_messages[0]!.content).toContainEqual(
      expect.objectContaining({ type: "tool_call", id: "t1", name: "weather", args: { city: "Oslo" } }),
    );
  });

  it("Vercel AI SDK: older usage names, a tool call span as a tool run, the outer call as a chain", () => {
    const old = spanToRun(
      span({
        "ai.operationId": "ai.generateText.doGenerate",
        "ai.usage.promptTokens": 7,
        "ai.usage.completionTokens": 2,
      }),
    );
    expect(old.extra.metadata.usage_metadata).toEqual({ input_tokens: 7, output_tokens: 2, total_tokens: 9 });
    const tool = spanToRun(
      span({
        "ai.operationId": "ai.toolCall",
        "ai.toolCall.name": "weather",
        "ai.toolCall.id": "t1",
        "ai.toolCall.args": '{"city":"Oslo"}',
        "ai.toolCall.result": '{"temp":3}',
      }),
    );
    expect(tool).toMatchObject({
      run_type: "tool",
      name: "weather",
      inputs: { city: "Oslo" },
      outputs: { temp: 3 },
    });
    expect(spanToRun(span({ "ai.operationId": "ai.streamText" })).run_type).toBe("chain");
  });

  it("langsmith's attributes: kind, name, metadata, tags, project, reference example, is_root over the OTel parent", () => {
    const run = spanToRun(
      span(
        {
          "langsmith.span.kind": "retriever",
          "langsmith.trace.name": "Search",
          "langsmith.metadata.user_id": "u9",
          "langsmith.metadata.config": '{"k":3}',
          "langsmith.span.tags": "a, b",
          "langsmith.trace.session_name": "proj-x",
          "langsmith.reference_example_id": "9d6bd6e2-1bb5-4a25-96c3-c7b2b5b8d0b1",
          "langsmith.is_root": true,
          "langsmith.traceable": "true",
          "gen_ai.prompt": '{"query":"q"}',
          "gen_ai.completion": '{"docs":[]}',
        },
        { parentSpanId: "00f067aa0ba902b7" },
      ),
    );
    expect(run).toMatchObject({
      run_type: "retriever",
      name: "Search",
      tags: ["a", "b"],
      session_name: "proj-x",
      reference_example_id: "9d6bd6e2-1bb5-4a25-96c3-c7b2b5b8d0b1",
      parent_run_id: null,
      inputs: { query: "q" },
      outputs: { docs: [] },
    });
    expect(run.extra.metadata).toEqual({ user_id: "u9", config: { k: 3 } });
    expect(
      spanToRun(span({ "langsmith.trace.session_name": "proj-x" }), { project: "from-header" }).session_name,
    ).toBe("from-header");
  });

  it("error status: the exception event's type, message and stack are the run's error; events are kept", () => {
    const run = spanToRun(
      span(
        {},
        {
          status: { code: 2, message: "failed" },
          events: [
            {
              name: "exception",
              timeUnixNano: START + 5n,
              attributes: {
                "exception.type": "RangeError",
                "exception.message": "too big",
                "exception.stacktrace": "at f()",
              },
            },
          ],
        },
      ),
    );
    expect(run.error).toBe("RangeError: too big\n\nat f()");
    expect(run.events).toEqual([
      {
        name: "exception",
        time: "2026-01-01T00:00:00.000000Z",
        kwargs: expect.objectContaining({ "exception.type": "RangeError" }),
      },
    ]);
    expect(spanToRun(span({}, { status: { code: 2, message: "" } })).error).toBe("Error");
    expect(spanToRun(span({}, { status: { code: 1, message: "" } })).error).toBeNull();
  });

  it("unmapped attributes and the resource's go to metadata, bounded in keys and value size", () => {
    const attrs: Attributes = { long: "x".repeat(MAX_METADATA_VALUE_CHARS + 10) };
    for (let i = 0; i < MAX_METADATA_KEYS + 20; i++) attrs[`k${i}`] = i;
    const run = spanToRun(span(attrs, { resource: { "service.name": "svc" } }));
    const md = run.extra.metadata;
    expect(md.long).toBe(`${"x".repeat(MAX_METADATA_VALUE_CHARS)}…`);
    expect(Object.keys(md).length).toBe(MAX_METADATA_KEYS + 1);
    expect(md["otel.dropped_attributes"]).toBe(22);
    expect(spanToRun(span({ a: 1 }, { resource: { "service.name": "svc" } })).extra.metadata).toEqual({
      a: 1,
      "service.name": "svc",
    });
  });
  it("an attribute named __proto__ is a metadata key like any other, not the metadata's prototype", () => {
    const md = spanToRun(span(JSON.parse('{"__proto__": {"polluted": 1}}'))).extra.metadata;
    expect(Object.getOwnPropertyDescriptor(md, "__proto__")?.value).toEqual({ polluted: 1 });
    expect(Object.getPrototypeOf(md)).toBe(Object.prototype);
  });
});
