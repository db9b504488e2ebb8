import type { FeedbackStats } from "../records/runs.ts";

// A run's feedback summarized per key, as runs carry it (`feedback_stats`): n (how many), avg (the mean of the
// scores given, booleans as 1 and 0; null when none has a score) and values (how many gave each categorical
// value: the strings, numbers and booleans of `value`, as text). Null for a run without feedback.
export interface ScoredFeedback {
  key: string;
  score?: number | boolean | null;
  value?: unknown;
}

export function feedbackStats(list: readonly ScoredFeedback[]): FeedbackStats | null {
  if (!list.length) return null;
  // Maps, and objects built by fromEntries: keys and values are user text ("__proto__" included).
  const acc = new Map<string, { n: number; sum: number; scored: number; values: Map<string, number> }>();
  for (const f of list) {
    const k = acc.get(f.key) ?? { n: 0, sum: 0, scored: 0, values: new Map<string, number>() };
    acc.set(f.key, k);
    k.n++;
    const score = typeof f.score === "boolean" ? Number(f.score) : f.score;
    if (typeof score === "number" && Number.isFinite(score)) {
      k.sum += score;
      k.scored++;
    }
    const v = f.value;
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
      const label = String(v);
      k.values.set(label, (k.values.get(label) ?? 0) + 1);
    }
  }
  return Object.fromEntries(
    [...acc]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, k]) => [
        key,
        {
          n: k.n,
          avg: k.scored ? Math.round((k.sum / k.scored) * 1e6) / 1e6 : null,
          values: Object.fromEntries(k.values),
        },
      ]),
  );
}
