import { randomUUID } from "node:crypto";
import zlib from "node:zlib";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { generateText, simulateReadableStream, stepCountIs, streamText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Client, type Run } from "langsmith";
import { initializeOTEL } from "langsmith/experimental/otel/setup";
import { getCurrentRunTree, traceable } from "langsmith/traceable";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { auth, base, facts } from "./helpers/cloud.ts";

// OpenTelemetry ingestion (issue 27, deliver 5) with real exporters: the OTLP proto and JSON exporters carrying the
// Vercel AI SDK's telemetry, and langsmith's own OTEL exporter; runs read back with the langsmith Client.
const OTLP_URL = `${base}/api/v1/otel/v1/traces`;
const client = new Client({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key });
const project = (name: string) => `otel-${name}-${randomUUID().slice(0, 8)}`;
const uuidOfSpan = (hex: string) => `00000000-0000-0000-${hex.slice(0, 4)}-${hex.slice(4)}`;

async function runsOf(projectName: string): Promise<Run[]> {
  const runs: Run[] = [];
  for await (const r of client.listRuns({ projectName })) runs.push(r);
  return runs;
}

/** A tracer whose spans go to `exporter`, and are kept in memory too (to know their ids). */
function tracerTo(exporter: ProtoExporter | JsonExporter) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter), new SimpleSpanProcessor(memory)],
  });
  return { tracer: provider.getTracer("ai"), provider, spans: () => memory.getFinishedSpans() };
}

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

const post = (body: Buffer | string, headers: Record<string, string>) =>
  fetch(OTLP_URL, { method: "POST", headers: { ...auth, ...headers }, body });

beforeAll(() => {
  // The Vercel AI SDK nests its spans through the active context, as any app with OpenTelemetry set up does.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
  trace.disable();
});

describe("OTLP ingestion: Vercel AI SDK telemetry through the OTLP exporters", () => {
  it("protobuf exporter, streamText: the llm run's messages, tokens, costs, time to first token, lineage", async () => {
    const name = project("vercel-proto");
    const exporter = new ProtoExporter({
      url: OTLP_URL,
      headers: { "x-api-key": facts.api_key, "Langsmith-Project": name },
    });
    const { tracer, provider, spans } = tracerTo(exporter);
    const model = new MockLanguageModelV3({
      provider: "openai.chat",
      modelId: "gpt-4o-mini",
      doStream: async () => ({
        stream: simulateReadableStream({
          initialDelayInMs: 40,
          chunkDelayInMs: 10,
          chunks: [
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "Hello" },
            { type: "text-delta", id: "t", delta: ", world" },
            { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(1000, 400) },
          ],
        }),
      }),
    });
    const result = streamText({
      model,
      system: "Be kind.",
      prompt: "Say hello",
      experimental_telemetry: { isEnabled: true, tracer, functionId: "greet", metadata: { user: "u1" } },
    });
    expect(await result.text).toBe("Hello, world");
    await provider.forceFlush();

    const root = spans().find((s) => s.name === "ai.streamText")!;
    const llmSpan = spans().find((s) => s.name === "ai.streamText.doStream")!;
    const runs = await runsOf(name);
    expect(runs.map((r) => r.name).sort()).toEqual(["ai.streamText", "ai.streamText.doStream"]);
    const llm = await client.readRun(uuidOfSpan(llmSpan.spanContext().spanId));
    const chain = runs.find((r) => r.name === "ai.streamText")!;
    expect(chain.id).toBe(uuidOfSpan(root.spanContext().spanId));
    expect(chain.run_type).toBe("chain");
    expect(llm.run_type).toBe("llm");
    expect(llm.parent_run_id).toBe(chain.id);
    // A trace is found by its root's id: every run's trace_id is the root run's id (LangSmith's run data format).
    expect(llm.trace_id).toBe(chain.id);
    expect(chain.trace_id).toBe(llm.trace_id);
    const wire = llm as Run & Record<string, unknown>;
    expect(wire.messages).toMatchObject({
      input_messages: [
        { role: "system", content: [{ type: "text", text: "Be kind." }] },
        { role: "user", content: [{ type: "text", text: "Say hello" }] },
      ],
      output_messages: [{ role: "assistant", content: [{ type: "text", text: "Hello, world" }] }],
    });
    expect([llm.prompt_tokens, llm.completion_tokens, llm.total_tokens]).toEqual([1000, 400, 1400]);
    // gpt-4o-mini in the default price map: $0.15 / $0.60 per 1M tokens.
    expect(Number(wire.total_cost)).toBeCloseTo(0.00039, 8);
    expect(llm.extra?.metadata).toMatchObject({
      ls_provider: "openai",
      ls_model_name: "gpt-4o-mini",
      user: "u1",
    });
    const ttft = Date.parse(String(wire.first_token_time)) - Date.parse(String(llm.start_time));
    expect(ttft).toBeGreaterThanOrEqual(30);
    expect(Date.parse(String(wire.first_token_time))).toBeLessThanOrEqual(Date.parse(String(llm.end_time)));
    await provider.shutdown();
  });

  it("JSON exporter with gzip, generateText with a tool: llm steps and a tool run with its input and output", async () => {
    const name = project("vercel-json");
    const exporter = new JsonExporter({
      url: OTLP_URL,
      headers: { "x-api-key": facts.api_key, "Langsmith-Project": name },
      compression: "gzip" as never,
    });
    const { tracer, provider } = tracerTo(exporter);
    const model = new MockLanguageModelV3({
      provider: "openai.chat",
      modelId: "gpt-4o-mini",
      doGenerate: [
        {
          content: [
            { type: "tool-call", toolCallId: "call-1", toolName: "weather", input: '{"city":"Oslo"}' },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage: usage(20, 5),
          warnings: [],
        },
        {
          content: [{ type: "text", text: "3 degrees in Oslo." }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: usage(30, 6),
          warnings: [],
        },
      ],
    });
    const out = await generateText({
      model,
      prompt: "Weather in Oslo?",
      tools: {
        weather: tool({
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, temp: 3 }),
        }),
      },
      stopWhen: stepCountIs(2),
      experimental_telemetry: { isEnabled: true, tracer },
    });
    expect(out.text).toBe("3 degrees in Oslo.");
    await provider.forceFlush();

    const runs = await runsOf(name);
    const toolRun = runs.find((r) => r.run_type === "tool")!;
    expect(toolRun).toMatchObject({
      name: "weather",
      inputs: { city: "Oslo" },
      outputs: { city: "Oslo", temp: 3 },
    });
    const steps = runs
      .filter((r) => r.run_type === "llm")
      .sort((a, b) => Number(a.prompt_tokens) - Number(b.prompt_tokens));
    expect(steps.map((r) => [r.prompt_tokens, r.completion_tokens])).toEqual([
      [20, 5],
      [30, 6],
    ]);
    const first = (await client.readRun(steps[0]!.id)) as Run & Record<string, unknown>;
    expect(first.messages).toMatchObject({
      output_messages: [
        {
          role: "assistant",
          content: expect.arrayContaining([
            expect.objectContaining({
              type: "tool_call",
              id: "call-1",
              name: "weather",
              args: { city: "Oslo" },
            }),
          ]),
        },
      ],
    });
    const root = runs.find((r) => r.name === "ai.generateText")!;
    expect(new Set(runs.map((r) => r.trace_id))).toEqual(new Set([root.trace_id]));
    expect(toolRun.parent_run_id).toBe(root.id);
    await provider.shutdown();
  });
});

describe("OTLP ingestion: langsmith's own OTEL exporter", () => {
  it("traceable() in OTEL mode: the root keeps the run id the SDK gave it; names, inputs, outputs, metadata, tags", async () => {
    const name = project("langsmith");
    process.env.LANGSMITH_TRACING = "true";
    process.env.LANGSMITH_ENDPOINT = `${base}/api/v1`;
    process.env.LANGSMITH_API_KEY = facts.api_key;
    // As langsmith documents it: the project from LANGSMITH_PROJECT, which runs and the exporter both read.
    process.env.LANGSMITH_PROJECT = name;
    const otel = initializeOTEL({ skipGlobalContextManagerSetup: true });
    const otelClient = new Client({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key, tracingMode: "otel" });
    const ids: Record<string, string> = {};
    const child = traceable(
      async (q: string) => {
        return { answer: q.toUpperCase() };
      },
      { name: "Shout", run_type: "tool", client: otelClient, tags: ["loud"] },
    );
    const parent = traceable(
      async (question: string) => {
        ids.root = getCurrentRunTree().id;
        return (await child(question)).answer;
      },
      { name: "Pipeline", client: otelClient, metadata: { team: "ops" } },
    );
    expect(await parent("hi")).toBe("HI");
    await otelClient.awaitPendingTraceBatches();
    await otel.DEFAULT_LANGSMITH_SPAN_PROCESSOR.forceFlush();

    const root = await client.readRun(ids.root!);
    expect(root).toMatchObject({
      name: "Pipeline",
      run_type: "chain",
      inputs: { input: "hi" },
      outputs: { outputs: "HI" },
    });
    expect(root.extra?.metadata).toMatchObject({ team: "ops" });
    expect(root.parent_run_id ?? null).toBeNull();
    const runs = await runsOf(name);
    expect(runs).toHaveLength(2);
    const shout = runs.find((r) => r.name === "Shout")!;
    expect(shout).toMatchObject({
      run_type: "tool",
      inputs: { input: "hi" },
      outputs: { answer: "HI" },
      tags: ["loud"],
    });
    expect(shout.parent_run_id).toBe(ids.root);
    expect(shout.trace_id).toBe(root.trace_id);
    await otel.DEFAULT_LANGSMITH_SPAN_EXPORTER.shutdown();
  });
});

describe("OTLP ingestion: the endpoint", () => {
  /** A real request's bytes: two spans serialized by the SDK's own OTLP protobuf serializer. */
  async function recordedRequest(): Promise<{ body: Buffer; spans: ReadableSpan[] }> {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
    const tracer = provider.getTracer("t");
    tracer.startActiveSpan("outer", (outer) => {
      tracer.startSpan("inner", { attributes: { "gen_ai.request.model": "m" } }).end();
      outer.end();
    });
    const spans = memory.getFinishedSpans();
    return { body: Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!), spans };
  }

  it("a resend is idempotent: the same spans twice are the same runs, counted once", async () => {
    const name = project("resend");
    const { body, spans } = await recordedRequest();
    const headers = { "content-type": "application/x-protobuf", "Langsmith-Project": name };
    for (let i = 0; i < 2; i++) {
      const res = await post(body, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-protobuf");
      expect((await res.arrayBuffer()).byteLength).toBe(0);
    }
    const runs = await runsOf(name);
    expect(runs.map((r) => r.id).sort()).toEqual(spans.map((s) => uuidOfSpan(s.spanContext().spanId)).sort());
    const [proj] = (await (
      await fetch(`${base}/api/v1/sessions?name=${name}`, { headers: auth })
    ).json()) as {
      run_count: number;
    }[];
    expect(proj!.run_count).toBe(2);
  });

  it("OTLP JSON by hand: camelCase, intValue as a string, no project header → the span's project attribute, else default", async () => {
    const name = project("json-attr");
    const traceId = randomUUID().replace(/-/g, "");
    const spanId = randomUUID().replace(/-/g, "").slice(0, 16);
    const span = (id: string, attributes: unknown[]) => ({
      traceId,
      spanId: id,
      name: "chat",
      kind: 3,
      startTimeUnixNano: "1767225600000000000",
      endTimeUnixNano: "1767225601000000000",
      attributes,
      status: { code: 2, message: "boom" },
    });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] },
          scopeSpans: [
            {
              spans: [
                span(spanId, [
                  { key: "langsmith.trace.session_name", value: { stringValue: name } },
                  { key: "gen_ai.usage.input_tokens", value: { intValue: "7" } },
                  { key: "gen_ai.request.model", value: { stringValue: "some-model" } },
                ]),
              ],
            },
          ],
        },
      ],
    };
    const res = await post(JSON.stringify(body), { "content-type": "application/json" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const run = await client.readRun(uuidOfSpan(spanId));
    expect(run).toMatchObject({
      run_type: "llm",
      error: "boom",
      prompt_tokens: 7,
      start_time: expect.anything(),
    });
    expect(run.extra?.metadata).toMatchObject({ "service.name": "svc", ls_model_name: "some-model" });
    expect((await runsOf(name)).map((r) => r.id)).toEqual([run.id]);

    const otherId = randomUUID().replace(/-/g, "").slice(0, 16);
    body.resourceSpans[0]!.scopeSpans[0]!.spans = [span(otherId, [])];
    expect((await post(JSON.stringify(body), { "content-type": "application/json" })).status).toBe(200);
    const [defaultProject] = (await (
      await fetch(`${base}/api/v1/sessions?name=default`, { headers: auth })
    ).json()) as {
      id: string;
    }[];
    expect((await client.readRun(uuidOfSpan(otherId))).session_id).toBe(defaultProject!.id);
  });

  it("children sent before their parents, each in a request of its own: every run's trace_id is the root's id, every run has the SDK's dotted order", async () => {
    const name = project("order");
    const traceId = randomUUID().replace(/-/g, "");
    const id = () => randomUUID().replace(/-/g, "").slice(0, 16);
    const [root, child, grandchild, sibling] = [id(), id(), id(), id()];
    const at = (s: number) => String(1767225600n * 1_000_000_000n + BigInt(s) * 1_000_000n);
    const span = (spanId: string, parentSpanId: string, start: number, attributes: unknown[] = []) => ({
      traceId,
      spanId,
      parentSpanId,
      name: `span-${start}`,
      startTimeUnixNano: at(start),
      endTimeUnixNano: at(start + 100),
      attributes,
    });
    const send = async (...spans: unknown[]) => {
      const res = await post(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }), {
        "content-type": "application/json",
        "Langsmith-Project": name,
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    };
    await send(
      span(grandchild, child, 3, [
        { key: "langsmith.trace.name", value: { stringValue: "named by langsmith" } },
        { key: "langsmith.span.kind", value: { stringValue: "tool" } },
        { key: "ai.toolCall.name", value: { stringValue: "tool name" } },
      ]),
    );
    await send(span(child, root, 2));
    // The root and a late sibling in one request, the child listed before its parent.
    await send(span(sibling, root, 4), span(root, "", 1));
    const runs = await runsOf(name);
    expect(runs).toHaveLength(4);
    const byId = new Map(runs.map((r) => [r.id, r]));
    const [r, c, g, sib] = [root, child, grandchild, sibling].map((s) => byId.get(uuidOfSpan(s))!);
    expect(runs.every((x) => x.trace_id === r!.id)).toBe(true);
    expect(r!.parent_run_id ?? null).toBeNull();
    expect(c!.parent_run_id).toBe(r!.id);
    expect(sib!.parent_run_id).toBe(r!.id);
    expect(g!.parent_run_id).toBe(c!.id);
    expect(g!.name).toBe("named by langsmith");
    const segment = (x: Run) => `${String(x.start_time).replace(/[-:.]/g, "").replace(/Z?$/, "")}Z${x.id}`;
    expect(r!.dotted_order).toBe(segment(r!));
    expect(c!.dotted_order).toBe(`${r!.dotted_order}.${segment(c!)}`);
    expect(g!.dotted_order).toBe(`${c!.dotted_order}.${segment(g!)}`);
    expect(sib!.dotted_order).toBe(`${r!.dotted_order}.${segment(sib!)}`);
    // The trace reads back by its root's id, in tree order.
    const tree = await fetch(`${base}/api/v2/traces/${r!.id}/runs`, { headers: auth });
    expect(tree.status).toBe(200);
    const { items } = (await tree.json()) as { items: { id: string }[] };
    expect(items.map((x) => x.id)).toEqual([r!.id, c!.id, g!.id, sib!.id]);
  });

  it("spans without valid ids are reported as a partial success; the others are stored", async () => {
    const name = project("partial");
    const good = randomUUID().replace(/-/g, "").slice(0, 16);
    const spans = [
      { traceId: "00".repeat(16), spanId: "01".repeat(8), name: "zero trace id" },
      { traceId: "ab".repeat(16), spanId: good, name: "fine" },
    ];
    const res = await post(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }), {
      "content-type": "application/json",
      "Langsmith-Project": name,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ partialSuccess: { rejectedSpans: "1" } });
    expect((await runsOf(name)).map((r) => r.name)).toEqual(["fine"]);
  });

  it("bad input is a 4xx: not protobuf, not OTLP JSON, another content type, a body over the limit, no key", async () => {
    const pb = { "content-type": "application/x-protobuf" };
    expect((await post(Buffer.from([0x0a, 0x7f, 0x01]), pb)).status).toBe(400);
    expect((await post("{not json", { "content-type": "application/json" })).status).toBe(400);
    expect(
      (await post(JSON.stringify({ resourceSpans: 5 }), { "content-type": "application/json" })).status,
    ).toBe(400);
    expect((await post("hello", { "content-type": "text/plain" })).status).toBe(415);
    expect((await post(Buffer.from("x"), { ...pb, "content-encoding": "zstd-ish" })).status).toBe(415);
    const bomb = zlib.gzipSync(Buffer.alloc(25 * 1024 * 1024));
    const big = await post(bomb, { ...pb, "content-encoding": "gzip" });
    expect(big.status).toBe(413);
    const anonymous = await fetch(OTLP_URL, { method: "POST", headers: pb, body: Buffer.alloc(0) });
    expect(anonymous.status).toBe(401);
  });
});
