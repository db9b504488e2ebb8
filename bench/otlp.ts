import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

// The OTLP row of `npm run bench -- ingest`: the same llm calls as the batch row's runs (bench/ingest.ts runAt),
// as spans in the GenAI conventions, serialized by the OpenTelemetry SDK's own OTLP protobuf serializer.

/** `count` one-span traces starting at `startMs` + 3 ms apart, in protobuf requests of `batch` spans each. */
export function otlpRequests(count: number, batch: number, startMs: number): Buffer[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("bench");
  for (let i = 0; i < count; i++) {
    const start = startMs + i * 3;
    tracer
      .startSpan("chat gpt-4o-mini", {
        root: true,
        startTime: start,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.system": "openai",
          "gen_ai.request.model": "gpt-4o-mini",
          "gen_ai.input.messages": JSON.stringify([
            {
              role: "user",
              parts: [{ type: "text", content: `question ${i}: what is the capital of France?` }],
            },
          ]),
          "gen_ai.output.messages": JSON.stringify([
            { role: "assistant", parts: [{ type: "text", content: "The capital of France is Paris." }] },
          ]),
          "gen_ai.usage.input_tokens": 14,
          "gen_ai.usage.output_tokens": 8,
          "langsmith.metadata.user": `u${i % 50}`,
          "langsmith.span.tags": `bench, shard-${i % 8}`,
        },
      })
      .end(start + 420);
  }
  const spans = memory.getFinishedSpans();
  const out: Buffer[] = [];
  for (let i = 0; i < spans.length; i += batch)
    out.push(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans.slice(i, i + batch))!));
  return out;
}
