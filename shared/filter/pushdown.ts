// Conjunctive facts safe to push into a DynamoDB query; the evaluator still runs afterwards.
import type { CmpNode, FilterNode } from "./ast.ts";
import { parseInstant } from "./values.ts";

export interface Pushdown {
  isRoot?: boolean;
  runType?: string;
  /** Inclusive lower bound on start_time, canonical `toISOString()` form (ms precision, Z). */
  startTimeGte?: string;
  /** Exclusive upper bound on start_time, canonical `toISOString()` form (ms precision, Z). */
  startTimeLt?: string;
}

const MAX_EPOCH_MS = 8.64e15;

/**
 * Only facts every matching run must satisfy: taken from a single comparison or from the children of
 * top-level `and`s (nested ands flatten), never from inside or/not. Bounds are widened to whole
 * milliseconds so a pushed range is always a superset of the true one. Contradictory conjuncts can
 * yield startTimeGte >= startTimeLt, which correctly means "no run matches".
 */
export function pushdown(node: FilterNode): Pushdown {
  const out: Pushdown = {};
  let lower = Number.NEGATIVE_INFINITY;
  let upper = Number.POSITIVE_INFINITY;
  for (const cmp of conjuncts(node, 0)) {
    if (cmp.field === "is_root" && cmp.op === "eq" && typeof cmp.value === "boolean") {
      out.isRoot ??= cmp.value;
    } else if (cmp.field === "run_type") {
      const only =
        cmp.op === "eq" ? cmp.value : cmp.op === "in" && Array.isArray(cmp.value) ? single(cmp.value) : null;
      if (typeof only === "string" || typeof only === "number") out.runType ??= String(only);
    } else if (cmp.field === "start_time" && !Array.isArray(cmp.value) && cmp.value !== null) {
      const ms = parseInstant(cmp.value);
      if (Number.isNaN(ms)) continue;
      if (cmp.op === "gt" || cmp.op === "gte" || cmp.op === "eq") lower = Math.max(lower, Math.floor(ms));
      if (cmp.op === "lt") upper = Math.min(upper, Math.ceil(ms));
      if (cmp.op === "lte" || cmp.op === "eq") upper = Math.min(upper, Math.floor(ms) + 1);
    }
  }
  if (Math.abs(lower) <= MAX_EPOCH_MS) out.startTimeGte = new Date(lower).toISOString();
  if (Math.abs(upper) <= MAX_EPOCH_MS) out.startTimeLt = new Date(upper).toISOString();
  return out;
}

function single(items: unknown[]): unknown {
  return items.length === 1 ? items[0] : null;
}

function conjuncts(node: FilterNode, depth: number): CmpNode[] {
  if (node.kind === "cmp") return [node];
  // Depth cap keeps hand-built ASTs from overflowing the stack; stopping early only pushes less.
  if (node.kind !== "and" || depth > 64) return [];
  return node.children.flatMap((child) => conjuncts(child, depth + 1));
}
