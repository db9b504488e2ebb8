import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { varintBytes } from "../../shared/runs/otlp/protobuf.ts";

// For the OTLP decoder's tests: real spans from the OpenTelemetry SDK, to serialize with the SDK's own OTLP
// serializers, and a minimal protobuf writer for what the SDK cannot emit (kvlists, bytes).

/** Two spans (a root and an errored child with an event and a link) as the SDK records them. */
export async function sdkSpans(): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "otlp-test" }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("otlp-scope", "1.2.3");
  tracer.startActiveSpan("root", { attributes: { "langsmith.span.kind": "chain" } }, (root) => {
    const child = tracer.startSpan(
      "child",
      {
        attributes: {
          s: "text",
          i: 42,
          d: 1.5,
          b: true,
          arr: ["a", "b"],
          big: 2 ** 40,
        },
        links: [{ context: root.spanContext(), attributes: { why: "because" } }],
      },
      trace.setSpan(context.active(), root),
    );
    child.addEvent("exception", { "exception.type": "TypeError", "exception.message": "bad" });
    child.setStatus({ code: SpanStatusCode.ERROR, message: "it failed" });
    child.end();
    root.end();
  });
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

// — a minimal protobuf writer —
/** A varint of any 64-bit value (a negative one as protobuf writes an int64: its two's complement). */
export const varint = (n: bigint | number): Buffer => varintBytes(BigInt.asUintN(64, BigInt(n)));
export const len = (field: number, payload: Buffer | string) => {
  const b = typeof payload === "string" ? Buffer.from(payload) : payload;
  return Buffer.concat([varint(field * 8 + 2), varint(b.length), b]);
};
export const num = (field: number, n: bigint | number) => Buffer.concat([varint(field * 8), varint(n)]);
export const fixed64 = (field: number, n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return Buffer.concat([varint(field * 8 + 1), b]);
};
export const kv = (key: string, anyValue: Buffer) => Buffer.concat([len(1, key), len(2, anyValue)]);

/** An ExportTraceServiceRequest holding one span with the given attribute KeyValues (already encoded). */
export function requestWithSpan(span: {
  traceId: Buffer;
  spanId: Buffer;
  name: string;
  attributes: Buffer[];
}) {
  const s = Buffer.concat([
    len(1, span.traceId),
    len(2, span.spanId),
    len(5, span.name),
    fixed64(7, 1_700_000_000_000_000_000n),
    fixed64(8, 1_700_000_001_000_000_000n),
    ...span.attributes.map((a) => len(9, a)),
  ]);
  return len(1, len(2, len(2, s)));
}
