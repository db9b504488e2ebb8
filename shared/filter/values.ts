// Total (never-throwing) value helpers shared by the parser's literal checks and the evaluator.

const ISO_RE =
  /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const EPOCH_RE = /^-?\d+(?:\.\d+)?$/;
const MAX_EPOCH_MS = 8.64e15;

/** Epoch ms (fractional for sub-ms precision) from an ISO-8601 string or epoch ms; NaN when unparseable. */
export function parseInstant(value: unknown): number {
  if (typeof value === "number") return Number.isFinite(value) ? value : Number.NaN;
  if (value instanceof Date) return value.getTime();
  if (typeof value !== "string") return Number.NaN;
  const text = value.trim();
  if (EPOCH_RE.test(text)) return Number(text);
  const m = ISO_RE.exec(text);
  if (!m) return Number.NaN;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 60) {
    return Number.NaN;
  }
  // setUTCFullYear, unlike Date.UTC, does not remap years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return Number.NaN;
  date.setUTCHours(hour, minute, second, 0);
  // Whole milliseconds are taken from the digits exactly, so pushdown's floor/ceil never drift by one.
  const digits = m[7] ?? "";
  const fraction = Number(digits.slice(0, 3).padEnd(3, "0")) + Number(`0.${digits.slice(3) || "0"}`);
  // A timestamp without a zone is read as UTC (LangSmith emits naive UTC timestamps).
  const ms = date.getTime() + fraction - zoneOffsetMs(m[8]);
  return Math.abs(ms) <= MAX_EPOCH_MS ? ms : Number.NaN;
}

function zoneOffsetMs(zone: string | undefined): number {
  if (!zone || zone === "Z" || zone === "z") return 0;
  const sign = zone[0] === "-" ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)) * 60_000;
}

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };
const DURATION_PART = /(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)\s*/y;

/** Seconds from a number (already seconds) or a duration like "2s", "500ms", "1.5m", "1h30m"; NaN if invalid. */
export function parseDuration(value: unknown): number {
  if (typeof value === "number") return Number.isFinite(value) ? value : Number.NaN;
  if (typeof value !== "string") return Number.NaN;
  const text = value.trim();
  if (EPOCH_RE.test(text)) return Number(text);
  if (text === "") return Number.NaN;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const m = DURATION_PART.exec(text);
    if (!m) return Number.NaN;
    total += Number(m[1]) * UNIT_SECONDS[m[2]];
  }
  return total;
}

/** Finite number from a number, bigint or numeric string; NaN otherwise (booleans are not numbers). */
export function toNumber(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string" && value.trim() !== "") {
    const n = Number(value);
    return Number.isFinite(n) ? n : Number.NaN;
  }
  return Number.NaN;
}

/** Safe JSON text: never throws on cycles, bigints or hostile toJSON. */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v)) ?? "";
  } catch {
    return "";
  }
}

/** Text form of a value; String() throws on null-prototype objects, so objects go through JSON. */
export function toText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return safeJson(value);
  return "";
}

export type Leaf = string | number | boolean | bigint;
const MAX_LEAF_DEPTH = 64;

/** Non-null scalar leaves of a JSON-like value, depth-capped and cycle-safe. */
export function scalarLeaves(value: unknown): Leaf[] {
  const out: Leaf[] = [];
  const seen = new Set<object>();
  const walk = (v: unknown, depth: number): void => {
    if (v === null || v === undefined) return;
    const t = typeof v;
    if (t === "string" || t === "number" || t === "boolean" || t === "bigint") {
      out.push(v as Leaf);
      return;
    }
    if (t !== "object" || depth >= MAX_LEAF_DEPTH || seen.has(v as object)) return;
    seen.add(v as object);
    const items = Array.isArray(v) ? v : Object.values(v as object);
    for (const item of items) walk(item, depth + 1);
  };
  walk(value, 0);
  return out;
}

/** Own entries of a plain (non-array) object; anything else has no keys. */
export function objectEntries(value: unknown): [string, unknown][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  return Object.entries(value);
}

type LikeToken = { any: true } | { any: false; ch: string | null };

/** SQL LIKE with `%`, `_` and backslash escapes, via linear backtracking (no regex, so no ReDoS). */
export function likeMatch(text: string, pattern: string, caseInsensitive: boolean): boolean {
  const chars = Array.from(caseInsensitive ? text.toLowerCase() : text);
  const source = Array.from(caseInsensitive ? pattern.toLowerCase() : pattern);
  const pat: LikeToken[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "%") pat.push({ any: true });
    else if (c === "_") pat.push({ any: false, ch: null });
    else if (c === "\\" && i + 1 < source.length) pat.push({ any: false, ch: source[++i] });
    else pat.push({ any: false, ch: c });
  }
  let t = 0;
  let p = 0;
  let starP = -1;
  let starT = 0;
  while (t < chars.length) {
    const tok = pat[p];
    if (tok && !tok.any && (tok.ch === null || tok.ch === chars[t])) {
      t++;
      p++;
    } else if (tok?.any) {
      starP = p++;
      starT = t;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pat.length && pat[p].any) p++;
  return p === pat.length;
}
