// The one percentile of the platform: the run stats (shared/runs/stats.ts) and the console's charts read it.
// It imports nothing, so the console's bundle may carry it.

/**
 * Nearest-rank percentile: `p` in percent (0–100, as in p50 and p99), of values in any order; the smallest
 * value that at least p% of the values are less than or equal to. Null when there are none.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
