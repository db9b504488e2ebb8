import {
  type Attributes,
  type AttrValue,
  intValue,
  MAX_VALUE_DEPTH,
  OtlpDecodeError,
  type OtlpEvent,
  type OtlpLink,
  type OtlpSpan,
  setOwn,
} from "./model.ts";

// The OTLP/HTTP JSON encoding of ExportTraceServiceRequest: the protobuf JSON mapping with OTLP's own rules —
// trace and span ids in hex (base64 accepted too, as generic protobuf JSON writers send), int64s as strings
// or numbers, enums as numbers or their names. Field names in lowerCamelCase or the .proto's snake_case.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A field by its lowerCamelCase name or its snake_case one. */
function field(o: Obj, camel: string): unknown {
  if (Object.hasOwn(o, camel)) return o[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return Object.hasOwn(o, snake) ? o[snake] : undefined;
}

function list(o: Obj, name: string, where: string): unknown[] {
  const v = field(o, name);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpDecodeError(`${where}.${name} must be an array`);
  return v;
}

function obj(v: unknown, where: string): Obj {
  if (!isObj(v)) throw new OtlpDecodeError(`${where} must be an object`);
  return v;
}

function str(o: Obj, name: string, where: string): string {
  const v = field(o, name);
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw new OtlpDecodeError(`${where}.${name} must be a string`);
  return v;
}

/** An id: hex of `bytes` bytes, or its base64; "" when absent. */
function id(o: Obj, name: string, bytes: number, where: string): string {
  const v = str(o, name, where);
  if (v === "") return "";
  if (v.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(v)) return v.toLowerCase();
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) {
    const b = Buffer.from(v, "base64");
    if (b.length === bytes) return b.toString("hex");
  }
  throw new OtlpDecodeError(`${where}.${name} must be ${bytes} bytes in hex`);
}

function int64(v: unknown, where: string): bigint {
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?\d{1,20}$/.test(v)) return BigInt(v);
  throw new OtlpDecodeError(`${where} must be an integer`);
}

function nanos(o: Obj, name: string, where: string): bigint {
  const v = field(o, name);
  if (v === undefined || v === null) return 0n;
  const n = int64(v, `${where}.${name}`);
  if (n < 0n || n >= 2n ** 64n) throw new OtlpDecodeError(`${where}.${name} out of range`);
  return n;
}

function enumValue(v: unknown, names: readonly string[], where: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "string" && names.includes(v)) return names.indexOf(v);
  throw new OtlpDecodeError(`${where} is not a known value`);
}

const SPAN_KINDS = [
  "SPAN_KIND_UNSPECIFIED",
  "SPAN_KIND_INTERNAL",
  "SPAN_KIND_SERVER",
  "SPAN_KIND_CLIENT",
  "SPAN_KIND_PRODUCER",
  "SPAN_KIND_CONSUMER",
] as const;
const STATUS_CODES = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"] as const;

function anyValue(v: unknown, where: string, depth: number): AttrValue {
  if (depth > MAX_VALUE_DEPTH) throw new OtlpDecodeError("attribute values nested too deep");
  if (v === undefined || v === null) return null;
  const o = obj(v, where);
  if (field(o, "stringValue") !== undefined) return str(o, "stringValue", where);
  const b = field(o, "boolValue");
  if (b !== undefined) {
    if (typeof b !== "boolean") throw new OtlpDecodeError(`${where}.boolValue must be a boolean`);
    return b;
  }
  const i = field(o, "intValue");
  if (i !== undefined) return intValue(BigInt.asIntN(64, int64(i, `${where}.intValue`)));
  const d = field(o, "doubleValue");
  if (d !== undefined) {
    if (typeof d === "number") return d;
    // The protobuf JSON mapping writes non-finite doubles as strings.
    if (d === "NaN" || d === "Infinity" || d === "-Infinity") return String(d);
    throw new OtlpDecodeError(`${where}.doubleValue must be a number`);
  }
  const a = field(o, "arrayValue");
  if (a !== undefined)
    return list(obj(a, where), "values", where).map((x, n) => anyValue(x, `${where}[${n}]`, depth + 1));
  const kv = field(o, "kvlistValue");
  if (kv !== undefined) return keyValues(list(obj(kv, where), "values", where), where, depth + 1);
  const bytes = field(o, "bytesValue");
  if (bytes !== undefined) {
    if (typeof bytes !== "string") throw new OtlpDecodeError(`${where}.bytesValue must be base64`);
    return bytes;
  }
  return null;
}

function keyValues(items: unknown[], where: string, depth = 0): Attributes {
  const out: Attributes = {};
  items.forEach((item, n) => {
    const kv = obj(item, `${where}[${n}]`);
    const key = str(kv, "key", `${where}[${n}]`);
    const value = anyValue(field(kv, "value"), `${where}[${n}].value`, depth);
    setOwn(out, key, value);
  });
  return out;
}

const attributes = (o: Obj, where: string) => keyValues(list(o, "attributes", where), `${where}.attributes`);

function event(v: unknown, where: string): OtlpEvent {
  const o = obj(v, where);
  return {
    timeUnixNano: nanos(o, "timeUnixNano", where),
    name: str(o, "name", where),
    attributes: attributes(o, where),
  };
}

function link(v: unknown, where: string): OtlpLink {
  const o = obj(v, where);
  return {
    traceId: id(o, "traceId", 16, where),
    spanId: id(o, "spanId", 8, where),
    attributes: attributes(o, where),
  };
}

function span(v: unknown, where: string, resource: Attributes, scope: OtlpSpan["scope"]): OtlpSpan {
  const o = obj(v, where);
  const st = field(o, "status");
  const status = isObj(st)
    ? {
        code: enumValue(field(st, "code"), STATUS_CODES, `${where}.status.code`),
        message: str(st, "message", `${where}.status`),
      }
    : { code: 0, message: "" };
  return {
    traceId: id(o, "traceId", 16, where),
    spanId: id(o, "spanId", 8, where),
    parentSpanId: id(o, "parentSpanId", 8, where),
    name: str(o, "name", where),
    kind: enumValue(field(o, "kind"), SPAN_KINDS, `${where}.kind`),
    startTimeUnixNano: nanos(o, "startTimeUnixNano", where),
    endTimeUnixNano: nanos(o, "endTimeUnixNano", where),
    attributes: attributes(o, where),
    events: list(o, "events", where).map((e, n) => event(e, `${where}.events[${n}]`)),
    links: list(o, "links", where).map((l, n) => link(l, `${where}.links[${n}]`)),
    status,
    resource,
    scope,
  };
}

/** ExportTraceServiceRequest as OTLP JSON (already parsed) → its spans. Throws OtlpDecodeError when it is not one. */
export function decodeJsonTraces(body: unknown): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  const root = obj(body, "body");
  list(root, "resourceSpans", "body").forEach((rsv, i) => {
    const rs = obj(rsv, `resourceSpans[${i}]`);
    const res = field(rs, "resource");
    const resource = isObj(res) ? attributes(res, `resourceSpans[${i}].resource`) : {};
    list(rs, "scopeSpans", `resourceSpans[${i}]`).forEach((ssv, j) => {
      const where = `resourceSpans[${i}].scopeSpans[${j}]`;
      const ss = obj(ssv, where);
      const sc = field(ss, "scope");
      const scope = isObj(sc)
        ? { name: str(sc, "name", where), version: str(sc, "version", where) }
        : { name: "", version: "" };
      for (const [k, sp] of list(ss, "spans", where).entries())
        out.push(span(sp, `${where}.spans[${k}]`, resource, scope));
    });
  });
  return out;
}
