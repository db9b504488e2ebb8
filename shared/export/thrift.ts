import { Sink } from "./sink.ts";

// A writer for Thrift's compact protocol: the subset Parquet's page headers and file footer use (i32, i64,
// bool, binary/string, structs, lists). Field headers carry the delta from the previous field id of the same
// struct, so callers must write fields in increasing id order within a struct.

/** Compact protocol type ids. */
export const CT = {
  BOOL_TRUE: 1,
  BOOL_FALSE: 2,
  I8: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  BINARY: 8,
  LIST: 9,
  STRUCT: 12,
} as const;

const utf8 = new TextEncoder();

export class CompactWriter {
  private out = new Sink(256);
  /** Last field id of each open struct, innermost last. */
  private lastIds: number[] = [0];

  get length(): number {
    return this.out.pos;
  }

  /** The bytes written so far (a copy, so the writer can be dropped or reused). */
  bytes(): Uint8Array {
    return this.out.copy();
  }

  private byte(b: number) {
    this.out.byte(b);
  }

  /** Zigzag then varint (i16/i32/i64 values; exact for |n| < 2^52). */
  private zigzag(n: number) {
    this.out.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  private fieldHeader(id: number, type: number) {
    const last = this.lastIds.length - 1;
    const delta = id - this.lastIds[last]!;
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.zigzag(id);
    }
    this.lastIds[last] = id;
  }

  i32(id: number, v: number): this {
    this.fieldHeader(id, CT.I32);
    this.zigzag(v);
    return this;
  }

  i16(id: number, v: number): this {
    this.fieldHeader(id, CT.I16);
    this.zigzag(v);
    return this;
  }

  /** i64 fields: offsets, sizes and counts, all well inside 2^52. */
  i64(id: number, v: number): this {
    this.fieldHeader(id, CT.I64);
    this.zigzag(v);
    return this;
  }

  i8(id: number, v: number): this {
    this.fieldHeader(id, CT.I8);
    this.byte(v & 0xff);
    return this;
  }

  bool(id: number, v: boolean): this {
    this.fieldHeader(id, v ? CT.BOOL_TRUE : CT.BOOL_FALSE);
    return this;
  }

  binary(id: number, v: Uint8Array): this {
    this.fieldHeader(id, CT.BINARY);
    this.rawBinary(v);
    return this;
  }

  string(id: number, s: string): this {
    return this.binary(id, utf8.encode(s));
  }

  /** A struct field: `body` writes its fields; the stop byte is added here. */
  struct(id: number, body?: (w: this) => void): this {
    this.fieldHeader(id, CT.STRUCT);
    this.structBody(body);
    return this;
  }

  /** A list field's header; then write `size` elements with the elem* methods. */
  listHeader(id: number, elemType: number, size: number): this {
    this.fieldHeader(id, CT.LIST);
    if (size < 15) this.byte((size << 4) | elemType);
    else {
      this.byte(0xf0 | elemType);
      this.out.varint(size);
    }
    return this;
  }

  elemI32(v: number): this {
    this.zigzag(v);
    return this;
  }

  elemString(s: string): this {
    this.rawBinary(utf8.encode(s));
    return this;
  }

  elemStruct(body?: (w: this) => void): this {
    this.structBody(body);
    return this;
  }

  /** Ends the outermost (message) struct. */
  stop(): this {
    this.byte(0);
    return this;
  }

  private structBody(body?: (w: this) => void) {
    this.lastIds.push(0);
    body?.(this);
    this.byte(0);
    this.lastIds.pop();
  }

  private rawBinary(v: Uint8Array) {
    this.out.varint(v.length);
    this.out.write(v);
  }
}
