import { isDeepStrictEqual } from "node:util";
import type { MatchCondition } from "@langchain/langgraph-checkpoint";

// The filter and namespace-matching rules of LangGraph's stores, evaluated on items read from DynamoDB.
const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

const isOperators = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).every((k) => OPERATORS.has(k));

/** One field: a plain value must equal it; an operator object must hold for every operator (numbers compare as numbers). */
function matchesField(actual: unknown, expected: unknown): boolean {
  if (!isOperators(expected)) return isDeepStrictEqual(actual, expected);
  return Object.entries(expected).every(([op, v]) => {
    switch (op) {
      case "$eq":
        return isDeepStrictEqual(actual, v);
      case "$ne":
        return !isDeepStrictEqual(actual, v);
      case "$gt":
        return Number(actual) > Number(v);
      case "$gte":
        return Number(actual) >= Number(v);
      case "$lt":
        return Number(actual) < Number(v);
      case "$lte":
        return Number(actual) <= Number(v);
      case "$in":
        return Array.isArray(v) && v.some((x) => isDeepStrictEqual(actual, x));
      default:
        return !Array.isArray(v) || !v.some((x) => isDeepStrictEqual(actual, x));
    }
  });
}

/** Every top-level field of the filter matches the item's value. */
export const matchesFilter = (value: Record<string, unknown>, filter: Record<string, unknown>) =>
  Object.entries(filter).every(([field, expected]) => matchesField(value[field], expected));

/** A prefix or suffix condition, `*` matching any one label. */
export function matchesNamespace(ns: string[], condition: MatchCondition): boolean {
  const { matchType, path } = condition;
  if (path.length > ns.length) return false;
  const start = matchType === "prefix" ? 0 : ns.length - path.length;
  if (matchType !== "prefix" && matchType !== "suffix")
    throw new Error(`Unsupported match type: ${matchType}`);
  return path.every((label, i) => label === "*" || ns[start + i] === label);
}
