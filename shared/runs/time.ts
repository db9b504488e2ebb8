import { canonicalFromMs } from "../time.ts";

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
