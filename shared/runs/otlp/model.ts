// The OTLP trace data both encodings (protobuf, JSON) decode to: ids as lower-case hex, times as nanosecond
// bigints, attribute values as JSON-like values (int64 as a number when safe, else its decimal string).
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

export interface OtlpEvent {
  timeUnixNano: bigint;
  name: string;
  attributes: Attributes;
}

export interface OtlpLink {
  traceId: string;
  spanId: string;
  attributes: Attributes;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Attributes;
  events: OtlpEvent[];
  links: OtlpLink[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Attributes;
  scope: { name: string; version: string };
}

/** The request could not be read as OTLP at all (a 400). */
export class OtlpDecodeError extends Error {}

/** Nesting of AnyValue arrays/kvlists a request may use: deeper is refused, never a stack overflow. */
export const MAX_VALUE_DEPTH = 32;

/** Sets an own property whatever the key, so an attribute named "__proto__" stays a key, not the prototype. */
export function setOwn(into: object, key: string, value: unknown) {
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Bytes → the value an attribute holds: base64, as the OTLP JSON mapping writes bytes_value. */
export const bytesValue = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** An int64 as a JSON number when it is exactly one, else its decimal string. */
export function intValue(n: bigint): number | string {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : String(n);
}
