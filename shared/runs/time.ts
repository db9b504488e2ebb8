// Run times arrive as ISO strings (up to microseconds, any offset) or epoch milliseconds. They are kept as
// canonical UTC strings with six fraction digits, so string order is time order (sort keys rely on it).
const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/i;

export function canonicalTime(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return fromMs(value, 0);
  if (typeof value !== "string") return undefined;
  const s = value.trim();
  if (/^\d{10,16}(\.\d+)?$/.test(s)) return fromMs(Number(s), 0);
  const m = ISO.exec(s);
  if (!m) return undefined;
  const frac = (m[3] ?? "").padEnd(6, "0").slice(0, 6);
  const ms = Date.parse(`${m[1]}T${m[2]}.${frac.slice(0, 3)}${normalizeOffset(m[4])}`);
  if (!Number.isFinite(ms)) return undefined;
  return fromMs(ms, Number(frac.slice(3)));
}

function normalizeOffset(off: string | undefined): string {
  if (!off || off.toUpperCase() === "Z") return "Z";
  return off.includes(":") ? off : `${off.slice(0, 3)}:${off.slice(3)}`;
}

function fromMs(ms: number, micros: number): string | undefined {
  let whole = Math.floor(ms);
  let extra = micros || Math.round((ms - whole) * 1000);
  // A fraction within half a microsecond of the next millisecond rounds into it, not to a fourth digit.
  if (extra === 1000) [whole, extra] = [whole + 1, 0];
  const d = new Date(whole);
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999) return undefined;
  return `${d.toISOString().slice(0, 23)}${String(extra).padStart(3, "0")}Z`;
}

/** The UTC day (YYYY-MM-DD) of a canonical time: the export partition. */
export const dayOf = (canonical: string) => canonical.slice(0, 10);
