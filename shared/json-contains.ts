// JSON containment, as PostgreSQL's jsonb @> reads it: the reference server's metadata and values filters.

/** No stored value nests deeper (DynamoDB's limit): a filter's part below this level matches nothing. */
const MAX_MATCH_DEPTH = 32;

/**
 * Is every key of `want` deep-equal in `have` (nested objects match as subsets, as jsonb @> does)? The one
 * metadata/values filter of threads, assistants and crons; bounded in depth, whatever the filter's.
 */
export function contains(have: unknown, want: unknown, depth = 0): boolean {
  if (want === null || typeof want !== "object") return have === want;
  if (depth >= MAX_MATCH_DEPTH) return false;
  if (Array.isArray(want))
    return Array.isArray(have) && want.every((w) => have.some((h) => contains(h, w, depth + 1)));
  if (have === null || typeof have !== "object" || Array.isArray(have)) return false;
  return Object.entries(want).every(([k, v]) => contains((have as Record<string, unknown>)[k], v, depth + 1));
}
