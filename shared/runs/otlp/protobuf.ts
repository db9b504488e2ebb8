import {
  type Attributes,
  type AttrValue,
  bytesValue,
  intValue,
  MAX_VALUE_DEPTH,
  OtlpDecodeError,
  type OtlpEvent,
  type OtlpLink,
  type OtlpSpan,
  setOwn,
} from "./model.ts";

// A protobuf wire-format reader for the OTLP trace messages (opentelemetry/proto/trace/v1, common/v1): only what
// ExportTraceServiceRequest holds, unknown fields skipped, every length checked against the bytes left.
// Field numbers are the .proto files'; a message read here is a (field → handler) loop over its bytes.

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

class Reader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }
  done() {
    return this.pos >= this.end;
  }
  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw new OtlpDecodeError("truncated varint");
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, result);
    }
    throw new OtlpDecodeError("varint longer than 10 bytes");
  }
  /** A varint used as a length, count or enum: a small non-negative number. */
  uint(): number {
    // Fast path: up to 4 bytes (28 bits) in plain numbers, which is every tag and length in practice.
    let result = 0;
    for (let i = 0; i < 4; i++) {
      if (this.pos >= this.end) throw new OtlpDecodeError("truncated varint");
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * 2 ** (7 * i);
      if (b < 0x80) return result;
    }
    this.pos -= 4;
    const v = this.varint();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new OtlpDecodeError("length out of range");
    return Number(v);
  }
  fixed64(): bigint {
    if (this.pos + 8 > this.end) throw new OtlpDecodeError("truncated fixed64");
    const v = Buffer.from(this.buf.buffer, this.buf.byteOffset + this.pos, 8).readBigUInt64LE(0);
    this.pos += 8;
    return v;
  }
  double(): number {
    if (this.pos + 8 > this.end) throw new OtlpDecodeError("truncated double");
    const v = Buffer.from(this.buf.buffer, this.buf.byteOffset + this.pos, 8).readDoubleLE(0);
    this.pos += 8;
    return v;
  }
  /** The bounds of a length-delimited field's payload; the reader moves past it. */
  sub(): Reader {
    const len = this.uint();
    if (len > this.end - this.pos) throw new OtlpDecodeError("length past the end of the message");
    const r = new Reader(this.buf, this.pos, this.pos + len);
    this.pos += len;
    return r;
  }
  bytes(): Uint8Array {
    const r = this.sub();
    return this.buf.subarray(r.pos, r.end);
  }
  string(): string {
    return Buffer.from(this.bytes()).toString("utf8");
  }
  skip(wire: number) {
    if (wire === VARINT) this.varint();
    else if (wire === I64) this.advance(8);
    else if (wire === LEN) this.sub();
    else if (wire === I32) this.advance(4);
    else throw new OtlpDecodeError(`unsupported wire type ${wire}`);
  }
  private advance(n: number) {
    if (this.pos + n > this.end) throw new OtlpDecodeError("truncated field");
    this.pos += n;
  }
  /** Calls `on(field, wire)` for each field; `on` reads the field or answers false to have it skipped. */
  fields(on: (field: number, wire: number) => boolean) {
    while (!this.done()) {
      const tag = this.uint();
      const field = Math.floor(tag / 8);
      const wire = tag % 8;
      if (field === 0) throw new OtlpDecodeError("field number 0");
      if (!on(field, wire)) this.skip(wire);
    }
  }
}

/** `wire` must be what the field's type is written as; otherwise the field is skipped (as protobuf does). */
const is = (wire: number, expected: number) => wire === expected;

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

function anyValue(r: Reader, depth: number): AttrValue {
  if (depth > MAX_VALUE_DEPTH) throw new OtlpDecodeError("attribute values nested too deep");
  let value: AttrValue = null;
  r.fields((f, w) => {
    if (f === 1 && is(w, LEN)) value = r.string();
    else if (f === 2 && is(w, VARINT)) value = r.varint() !== 0n;
    else if (f === 3 && is(w, VARINT)) value = intValue(BigInt.asIntN(64, r.varint()));
    else if (f === 4 && is(w, I64)) value = r.double();
    else if (f === 5 && is(w, LEN)) value = arrayValue(r.sub(), depth + 1);
    else if (f === 6 && is(w, LEN)) value = keyValues(r.sub(), depth + 1);
    else if (f === 7 && is(w, LEN)) value = bytesValue(r.bytes());
    else return false;
    return true;
  });
  return value;
}

function arrayValue(r: Reader, depth: number): AttrValue[] {
  const out: AttrValue[] = [];
  r.fields((f, w) => {
    if (f !== 1 || !is(w, LEN)) return false;
    out.push(anyValue(r.sub(), depth));
    return true;
  });
  return out;
}

/** A KeyValueList (field 1: repeated KeyValue), as an object. */
function keyValues(r: Reader, depth: number): Attributes {
  const out: Attributes = {};
  r.fields((f, w) => {
    if (f !== 1 || !is(w, LEN)) return false;
    keyValue(r.sub(), out, depth);
    return true;
  });
  return out;
}

function keyValue(r: Reader, into: Attributes, depth: number) {
  let key = "";
  let value: AttrValue = null;
  r.fields((f, w) => {
    if (f === 1 && is(w, LEN)) key = r.string();
    else if (f === 2 && is(w, LEN)) value = anyValue(r.sub(), depth);
    else return false;
    return true;
  });
  setOwn(into, key, value);
}

/** One KeyValue of a repeated attributes field, into `into`. */
const attributeField = (r: Reader, into: Attributes) => keyValue(r.sub(), into, 0);

function event(r: Reader): OtlpEvent {
  const e: OtlpEvent = { timeUnixNano: 0n, name: "", attributes: {} };
  r.fields((f, w) => {
    if (f === 1 && is(w, I64)) e.timeUnixNano = r.fixed64();
    else if (f === 2 && is(w, LEN)) e.name = r.string();
    else if (f === 3 && is(w, LEN)) attributeField(r, e.attributes);
    else return false;
    return true;
  });
  return e;
}

function link(r: Reader): OtlpLink {
  const l: OtlpLink = { traceId: "", spanId: "", attributes: {} };
  r.fields((f, w) => {
    if (f === 1 && is(w, LEN)) l.traceId = hex(r.bytes());
    else if (f === 2 && is(w, LEN)) l.spanId = hex(r.bytes());
    else if (f === 4 && is(w, LEN)) attributeField(r, l.attributes);
    else return false;
    return true;
  });
  return l;
}

function status(r: Reader): OtlpSpan["status"] {
  const s = { code: 0, message: "" };
  r.fields((f, w) => {
    if (f === 2 && is(w, LEN)) s.message = r.string();
    else if (f === 3 && is(w, VARINT)) s.code = Number(BigInt.asIntN(32, r.varint()));
    else return false;
    return true;
  });
  return s;
}

function span(r: Reader, resource: Attributes, scope: OtlpSpan["scope"]): OtlpSpan {
  const s: OtlpSpan = {
    traceId: "",
    spanId: "",
    parentSpanId: "",
    name: "",
    kind: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: {},
    events: [],
    links: [],
    status: { code: 0, message: "" },
    resource,
    scope,
  };
  r.fields((f, w) => {
    if (f === 1 && is(w, LEN)) s.traceId = hex(r.bytes());
    else if (f === 2 && is(w, LEN)) s.spanId = hex(r.bytes());
    else if (f === 4 && is(w, LEN)) s.parentSpanId = hex(r.bytes());
    else if (f === 5 && is(w, LEN)) s.name = r.string();
    else if (f === 6 && is(w, VARINT)) s.kind = Number(BigInt.asIntN(32, r.varint()));
    else if (f === 7 && is(w, I64)) s.startTimeUnixNano = r.fixed64();
    else if (f === 8 && is(w, I64)) s.endTimeUnixNano = r.fixed64();
    else if (f === 9 && is(w, LEN)) attributeField(r, s.attributes);
    else if (f === 11 && is(w, LEN)) s.events.push(event(r.sub()));
    else if (f === 13 && is(w, LEN)) s.links.push(link(r.sub()));
    else if (f === 15 && is(w, LEN)) s.status = status(r.sub());
    else return false;
    return true;
  });
  return s;
}

function scopeOf(r: Reader): OtlpSpan["scope"] {
  const s = { name: "", version: "" };
  r.fields((f, w) => {
    if (f === 1 && is(w, LEN)) s.name = r.string();
    else if (f === 2 && is(w, LEN)) s.version = r.string();
    else return false;
    return true;
  });
  return s;
}

function resourceOf(r: Reader): Attributes {
  const attrs: Attributes = {};
  r.fields((f, w) => {
    if (f !== 1 || !is(w, LEN)) return false;
    attributeField(r, attrs);
    return true;
  });
  return attrs;
}

/** ScopeSpans: its spans are read after the whole message, so a scope written after them still applies. */
function scopeSpans(r: Reader, resource: Attributes, out: OtlpSpan[]) {
  let scope = { name: "", version: "" };
  const spans: Reader[] = [];
  r.fields((f, w) => {
    if (f === 1 && is(w, LEN)) scope = scopeOf(r.sub());
    else if (f === 2 && is(w, LEN)) spans.push(r.sub());
    else return false;
    return true;
  });
  for (const s of spans) out.push(span(s, resource, scope));
}

function resourceSpans(r: Reader, out: OtlpSpan[]) {
  let resource: Attributes = {};
  const scopes: Reader[] = [];
  r.fields((f, w) => {
    if (f === 1 && is(w, LEN)) resource = resourceOf(r.sub());
    else if (f === 2 && is(w, LEN)) scopes.push(r.sub());
    else return false;
    return true;
  });
  for (const s of scopes) scopeSpans(s, resource, out);
}

/** ExportTraceServiceRequest (protobuf) → its spans. Throws OtlpDecodeError on bytes that are not one. */
export function decodeProtobufTraces(body: Uint8Array): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  const r = new Reader(body);
  r.fields((f, w) => {
    if (f !== 1 || !is(w, LEN)) return false;
    resourceSpans(r.sub(), out);
    return true;
  });
  return out;
}

/** ExportTraceServiceResponse: empty, or partial_success {rejected_spans, error_message}. */
export function encodeProtobufResponse(rejected: number, message: string): Buffer {
  if (rejected === 0 && message === "") return Buffer.alloc(0);
  const inner = Buffer.concat([
    rejected ? Buffer.concat([Buffer.from([0x08]), varintBytes(BigInt(rejected))]) : Buffer.alloc(0),
    message ? lenField(2, Buffer.from(message, "utf8")) : Buffer.alloc(0),
  ]);
  return lenField(1, inner);
}

function lenField(field: number, payload: Buffer) {
  return Buffer.concat([varintBytes(BigInt(field * 8 + LEN)), varintBytes(BigInt(payload.length)), payload]);
}

/** A protobuf varint of an unsigned 64-bit value. */
export function varintBytes(n: bigint): Buffer {
  const out: number[] = [];
  let v = n;
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v ? b | 0x80 : b);
  } while (v);
  return Buffer.from(out);
}
