import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { describe, expect, it } from "vitest";
import { kv, len, num, requestWithSpan, sdkSpans } from "../../../test/helpers/otlp-spans.ts";
import { decodeJsonTraces } from "../../runs/otlp/json.ts";
import { MAX_VALUE_DEPTH, OtlpDecodeError, type OtlpSpan } from "../../runs/otlp/model.ts";
import { decodeProtobufTraces, encodeProtobufResponse } from "../../runs/otlp/protobuf.ts";

// Both decoders read what the OpenTelemetry SDK's own OTLP serializers write, to the same spans.
async function expectSdkSpans(decode: (spans: Awaited<ReturnType<typeof sdkSpans>>) => OtlpSpan[]) {
  const sdk = await sdkSpans();
  const spans = decode(sdk);
  expect(spans).toHaveLength(2);
  const child = spans.find((s) => s.name === "child")!;
  const root = spans.find((s) => s.name === "root")!;
  const sdkChild = sdk.find((s) => s.name === "child")!;
  expect(child.traceId).toBe(sdkChild.spanContext().traceId);
  expect(child.spanId).toBe(sdkChild.spanContext().spanId);
  expect(child.parentSpanId).toBe(root.spanId);
  expect(root.parentSpanId).toBe("");
  const [s, ns] = sdkChild.startTime;
  expect(child.startTimeUnixNano).toBe(BigInt(s) * 1_000_000_000n + BigInt(ns));
  expect(child.attributes).toEqual({ s: "text", i: 42, d: 1.5, b: true, arr: ["a", "b"], big: 2 ** 40 });
  expect(child.events).toEqual([
    {
      name: "exception",
      timeUnixNano: expect.any(BigInt),
      attributes: { "exception.type": "TypeError", "exception.message": "bad" },
    },
  ]);
  expect(child.links).toEqual([
    { traceId: root.traceId, spanId: root.spanId, attributes: { why: "because" } },
  ]);
  expect(child.status).toEqual({ code: 2, message: "it failed" });
  expect(child.resource["service.name"]).toBe("otlp-test");
  expect(child.scope).toEqual({ name: "otlp-scope", version: "1.2.3" });
}

describe("OTLP decoders", () => {
  it("protobuf: reads the SDK's ProtobufTraceSerializer output", async () => {
    await expectSdkSpans((sdk) => decodeProtobufTraces(ProtobufTraceSerializer.serializeRequest(sdk)!));
  });

  it("JSON: reads the SDK's JsonTraceSerializer output (hex ids, int64 as strings)", async () => {
    await expectSdkSpans((sdk) =>
      decodeJsonTraces(JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(sdk)!).toString())),
    );
  });

  it("protobuf: kvlist, bytes, negative int64 and array values", () => {
    const str = (s: string) => len(1, s);
    const body = requestWithSpan({
      traceId: Buffer.alloc(16, 1),
      spanId: Buffer.alloc(8, 2),
      name: "values",
      attributes: [
        kv("kv", len(6, len(1, kv("inner", str("x"))))),
        kv("bytes", len(7, Buffer.from([0, 255]))),
        kv("neg", num(3, -5n)),
        kv("huge", num(3, 2n ** 62n)),
        kv("arr", len(5, Buffer.concat([len(1, str("a")), len(1, num(2, 1))]))),
      ],
    });
    const [span] = decodeProtobufTraces(body);
    expect(span!.attributes).toEqual({
      kv: { inner: "x" },
      bytes: Buffer.from([0, 255]).toString("base64"),
      neg: -5,
      huge: String(2n ** 62n),
      arr: ["a", true],
    });
  });

  it("JSON: snake_case names, enum names, base64 ids, kvlist and bytes values", () => {
    const [span] = decodeJsonTraces({
      resource_spans: [
        {
          scope_spans: [
            {
              spans: [
                {
                  trace_id: Buffer.alloc(16, 1).toString("base64"),
                  span_id: "0202020202020202",
                  name: "n",
                  kind: "SPAN_KIND_CLIENT",
                  start_time_unix_nano: 5,
                  status: { code: "STATUS_CODE_ERROR" },
                  attributes: [
                    {
                      key: "kv",
                      value: { kvlistValue: { values: [{ key: "a", value: { intValue: "7" } }] } },
                    },
                    { key: "b", value: { bytesValue: "AP8=" } },
                    { key: "__proto__", value: { stringValue: "own key" } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    expect(span!.traceId).toBe("01".repeat(16));
    expect(span!.kind).toBe(3);
    expect(span!.status.code).toBe(2);
    expect(span!.startTimeUnixNano).toBe(5n);
    expect(span!.attributes.kv).toEqual({ a: 7 });
    expect(span!.attributes.b).toBe("AP8=");
    expect(Object.getOwnPropertyDescriptor(span!.attributes, "__proto__")?.value).toBe("own key");
  });

  it("refuses what is not an ExportTraceServiceRequest with OtlpDecodeError", () => {
    const bad = [
      Buffer.from([0x0a, 0x05, 0x01]), // a length past the end
      Buffer.from([0x0b]), // wire type 3 (groups)
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), // an 11-byte varint
      Buffer.from([0x00, 0x00]), // field number 0
    ];
    for (const b of bad) expect(() => decodeProtobufTraces(b)).toThrow(OtlpDecodeError);
    for (const j of [
      [],
      "x",
      { resourceSpans: {} },
      { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "zz" }] }] }] },
    ])
      expect(() => decodeJsonTraces(j)).toThrow(OtlpDecodeError);
  });

  it("refuses attribute values nested deeper than the bound, in both encodings", () => {
    let value = len(1, "leaf");
    for (let i = 0; i <= MAX_VALUE_DEPTH + 1; i++) value = len(5, len(1, value));
    const body = requestWithSpan({
      traceId: Buffer.alloc(16, 1),
      spanId: Buffer.alloc(8, 1),
      name: "deep",
      attributes: [kv("d", value)],
    });
    expect(() => decodeProtobufTraces(body)).toThrow(/nested too deep/);
    let json: unknown = { stringValue: "leaf" };
    for (let i = 0; i <= MAX_VALUE_DEPTH + 1; i++) json = { arrayValue: { values: [json] } };
    const req = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId: "01".repeat(16), spanId: "01".repeat(8), attributes: [{ key: "d", value: json }] },
              ],
            },
          ],
        },
      ],
    };
    expect(() => decodeJsonTraces(req)).toThrow(/nested too deep/);
  });

  it("the protobuf response is what the SDK reads as a partial success (empty when all were accepted)", () => {
    expect(encodeProtobufResponse(0, "")).toHaveLength(0);
    const parsed = ProtobufTraceSerializer.deserializeResponse(encodeProtobufResponse(3, "3 spans refused"));
    expect(parsed.partialSuccess).toMatchObject({ errorMessage: "3 spans refused" });
    expect(Number(parsed.partialSuccess?.rejectedSpans)).toBe(3);
  });
});
