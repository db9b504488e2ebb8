// The clock, and the two string forms of an instant in use: Date's ISO form (milliseconds, `…:05.678Z`) and
// the canonical form of run times (microseconds, `…:05.678000Z`), in which string order is time order (sort
// keys rely on it; shared/runs/time.ts parses incoming run times into it). A base module: imports nothing.

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

/** Now in Date's ISO form, milliseconds: `2025-01-02T03:04:05.678Z`. */
export const isoNow = (): string => new Date().toISOString();

/** Now in the canonical form of run times, microseconds: `2025-01-02T03:04:05.678000Z`. */
export const canonicalNow = (): string => canonicalFromMs(Date.now())!;
