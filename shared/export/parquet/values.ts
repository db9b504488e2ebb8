import type { ExportField } from "../../records/export-fields.ts";
import { canonicalTime } from "../../time.ts";

// An exported value as the value its Parquet column stores: timestamps as epoch microseconds, integers,
// doubles, booleans, text, and the items of a list. Each check throws a TypeError naming the column.

const TWO_63 = 2 ** 63;

/** The digit at `i` of `s`, or 10,000 (past every range checked below, in any position) if it is not one. */
function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : 10_000;
}

/**
 * Reads timestamps as microseconds since the epoch. It keeps the parts of the last time it read (whole
 * seconds since the epoch, and the microseconds), so that a time whose microsecond count is past 2^53 can
 * still be written exactly: `exact()` right after the read. Each column builder has its own.
 */
export class TimestampReader {
  private lastSeconds = 0;
  private lastMicros = 0;

  /** The last time read, exactly (for times whose microsecond count is past 2^53). */
  exact(): bigint {
    return BigInt(this.lastSeconds) * 1_000_000n + BigInt(this.lastMicros);
  }

  /** Microseconds since the epoch of a canonical UTC time (`YYYY-MM-DDTHH:MM:SS.ffffffZ`); NaN if not one. */
  canonical(s: string): number {
    if (
      s.length !== 27 ||
      s.charCodeAt(4) !== 45 ||
      s.charCodeAt(7) !== 45 ||
      s.charCodeAt(10) !== 84 ||
      s.charCodeAt(13) !== 58 ||
      s.charCodeAt(16) !== 58 ||
      s.charCodeAt(19) !== 46 ||
      s.charCodeAt(26) !== 90
    )
      return Number.NaN;
    let y = digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3);
    const mo = digit(s, 5) * 10 + digit(s, 6);
    const day = digit(s, 8) * 10 + digit(s, 9);
    const h = digit(s, 11) * 10 + digit(s, 12);
    const mi = digit(s, 14) * 10 + digit(s, 15);
    const sec = digit(s, 17) * 10 + digit(s, 18);
    const ms = digit(s, 20) * 100 + digit(s, 21) * 10 + digit(s, 22);
    const us = digit(s, 23) * 100 + digit(s, 24) * 10 + digit(s, 25);
    if (
      y > 9999 ||
      mo < 1 ||
      mo > 12 ||
      day < 1 ||
      day > 31 ||
      h > 23 ||
      mi > 59 ||
      sec > 59 ||
      ms > 999 ||
      us > 999
    )
      return Number.NaN;
    // Days from 1970-01-01 to the civil date (proleptic Gregorian).
    if (mo <= 2) y -= 1;
    const era = Math.floor(y / 400);
    const yoe = y - era * 400;
    const doy = Math.floor((153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5) + day - 1;
    const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
    const days = era * 146097 + doe - 719468;
    this.lastSeconds = ((days * 24 + h) * 60 + mi) * 60 + sec;
    this.lastMicros = ms * 1000 + us;
    // Past 2255-06-05 the microsecond count leaves the exact range of a double: see exact().
    return this.lastSeconds * 1_000_000 + this.lastMicros;
  }

  /** A timestamp that is not a canonical string (the fast path is canonical()). */
  any(field: ExportField, v: unknown): number {
    // Anything canonicalTime accepts: other ISO forms and offsets, epoch milliseconds (number or digits).
    const c = typeof v === "string" || typeof v === "number" ? canonicalTime(v) : undefined;
    const us = c === undefined ? Number.NaN : this.canonical(c);
    if (Number.isNaN(us)) fail(field, "expected a UTC timestamp", v);
    return us;
  }
}

function fail(field: ExportField, what: string, v: unknown): never {
  const shown = typeof v === "string" ? JSON.stringify(v.slice(0, 60)) : String(v);
  throw new TypeError(`Parquet column ${field}: ${what}, got ${shown}`);
}

export function int64(field: ExportField, v: unknown): number {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  if (!Number.isFinite(n) || Math.abs(n) >= TWO_63) fail(field, "expected an integer", v);
  return Math.trunc(n);
}

export function float64(field: ExportField, v: unknown): number {
  if (typeof v === "number") return v;
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  if (Number.isNaN(n)) fail(field, "expected a number", v);
  return n;
}

export function bool(field: ExportField, v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (v === "true") return true;
  if (v === "false") return false;
  return fail(field, "expected a boolean", v);
}

export function text(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
}

export function listItems(field: ExportField, v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") {
    try {
      const parsed = JSON.parse(v);
      if (Array.isArray(parsed)) return parsed;
    } catch {}
  }
  return fail(field, "expected a list of strings", v);
}
