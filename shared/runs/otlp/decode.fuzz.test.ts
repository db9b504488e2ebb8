import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sdkSpans } from "../../../test/helpers/otlp-spans.ts";
import { decodeJsonTraces } from "../../runs/otlp/json.ts";
import { spanIdsValid, spanToRun } from "../../runs/otlp/map.ts";
import { OtlpDecodeError, type OtlpSpan } from "../../runs/otlp/model.ts";
import { decodeProtobufTraces } from "../../runs/otlp/protobuf.ts";
import { RunCreate } from "../../runs/schema.ts";

const NUM_RUNS = 500;

/** Decodes or refuses with OtlpDecodeError, and every decoded span maps to a run the batch schema accepts. */
function decodesOrRefuses(decode: () => OtlpSpan[]) {
  let spans: OtlpSpan[];
  try {
    spans = decode();
  } catch (err) {
    expect(err).toBeInstanceOf(OtlpDecodeError);
    return;
  }
  for (const s of spans.filter(spanIdsValid)) {
    const run = spanToRun(s);
    const parsed = RunCreate.safeParse(run);
    expect(parsed.error?.issues ?? [], JSON.stringify(run)).toEqual([]);
    expect(() => JSON.stringify(run)).not.toThrow();
  }
}

describe("OTLP decoders (fuzz)", () => {
  it("protobuf: arbitrary bytes are decoded or refused, never a crash", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) =>
        decodesOrRefuses(() => decodeProtobufTraces(bytes)),
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it("protobuf: a real request with bytes flipped, cut or inserted is decoded or refused", async () => {
    const valid = ProtobufTraceSerializer.serializeRequest(await sdkSpans())!;
    const mutation = fc.record({
      at: fc.nat({ max: valid.length }),
      cut: fc.nat({ max: 8 }),
      insert: fc.uint8Array({ maxLength: 8 }),
    });
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
        let b = Buffer.from(valid);
        for (const m of mutations)
          b = Buffer.concat([b.subarray(0, m.at), Buffer.from(m.insert), b.subarray(m.at + m.cut)]);
        decodesOrRefuses(() => decodeProtobufTraces(b));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("JSON: arbitrary JSON values, and OTLP-shaped ones with arbitrary leaves, are decoded or refused", () => {
    const leaf = fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom("0a".repeat(8), "0b".repeat(16), "00".repeat(8)),
    );
    const value = fc.oneof(
      fc.record({ stringValue: leaf }),
      fc.record({ intValue: leaf }),
      fc.record({ doubleValue: leaf }),
      fc.record({ boolValue: leaf }),
      fc.record({ bytesValue: leaf }),
      fc.record({
        arrayValue: fc.record({ values: fc.array(fc.record({ stringValue: leaf }), { maxLength: 3 }) }),
      }),
      fc.record({ kvlistValue: leaf }),
    );
    const span = fc.record(
      {
        traceId: leaf,
        spanId: leaf,
        parentSpanId: leaf,
        name: leaf,
        kind: leaf,
        startTimeUnixNano: leaf,
        endTimeUnixNano: leaf,
        attributes: fc.array(fc.record({ key: fc.string(), value }), { maxLength: 4 }),
        events: fc.array(fc.record({ name: leaf, timeUnixNano: leaf, attributes: leaf }), { maxLength: 2 }),
        status: fc.record({ code: leaf, message: leaf }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    );
    const request = fc.record({
      resourceSpans: fc.array(fc.record({ scopeSpans: fc.array(fc.record({ spans: fc.array(span) })) })),
    });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), request), (body) =>
        decodesOrRefuses(() => decodeJsonTraces(body)),
      ),
      { numRuns: NUM_RUNS / 2 },
    );
  });
});
