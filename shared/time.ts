// The clock, and the two string forms of an instant in use: Date's ISO form (milliseconds, `…:05.678Z`) and
// the canonical form of run times (microseconds, `…:05.678000Z`), in which string order is time order (sort
// keys rely on it; canonicalTime parses incoming times into it). A base module: imports nothing.

/** The canonical string of epoch `ms` plus `micros` microseconds; undefined outside the years 1970–9999. */
export function canonicalFromMs(ms: number, micros = 0): string | undefined {
  let whole = Math.floor(ms);
  let extra = micros || Math.round((ms - whole) * 1000);
  // A fraction within half a microsecond of the next millisecond rounds into it, not to a fourth digit.
  if (extra === 1000) [whole, extra] = [whole + 1, 0];
  const d = new Date(whole);
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999) return undefined;
  return `${d.toISOString().slice(0, 23)}${String(extra).padStart(3, "0")}Z`;
}

/** What time it is, in epoch ms: handed to what schedules (crons, the sweeper) so tests can set it. */
export type Clock = () => number;
/** The wall clock. */
export const systemClock: Clock = () => Date.now();

/** Now in Date's ISO form, milliseconds: `2025-01-02T03:04:05.678Z`. */
export const isoNow = (): string => new Date().toISOString();

/** Now in the canonical form of run times, microseconds: `2025-01-02T03:04:05.678000Z`. */
export const canonicalNow = (): string => canonicalFromMs(Date.now())!;

// Run times arrive as ISO strings (up to microseconds, any offset) or epoch milliseconds. They are kept as
// canonical UTC strings with six fraction digits, so string order is time order (sort keys rely on it).
const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/i;

export function canonicalTime(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return canonicalFromMs(value);
  if (typeof value !== "string") return undefined;
  const s = value.trim();
  if (/^\d{10,16}(\.\d+)?$/.test(s)) return canonicalFromMs(Number(s));
  const m = ISO.exec(s);
  if (!m) return undefined;
  const frac = (m[3] ?? "").padEnd(6, "0").slice(0, 6);
  const ms = Date.parse(`${m[1]}T${m[2]}.${frac.slice(0, 3)}${normalizeOffset(m[4])}`);
  if (!Number.isFinite(ms)) return undefined;
  return canonicalFromMs(ms, Number(frac.slice(3)));
}

function normalizeOffset(off: string | undefined): string {
  if (!off || off.toUpperCase() === "Z") return "Z";
  return off.includes(":") ? off : `${off.slice(0, 3)}:${off.slice(3)}`;
}

/** The UTC day (YYYY-MM-DD) of a canonical time: the export partition. */
export const dayOf = (canonical: string) => canonical.slice(0, 10);
