/*
 * Evaluator semantics (decisions where LangSmith's docs leave room):
 * - Every field is read as a list of candidate values: scalar fields give 0 (null/absent) or 1 value;
 *   tags give their elements; *_key give the top-level keys of metadata/inputs/outputs; *_value give
 *   all non-null scalar leaves (recursively) of that object.
 * - eq/gt/gte/lt/lte/in/like/ilike/search hold when ANY candidate satisfies them. neq is "no candidate
 *   equals", except that an absent scalar (null field, latency without end_time) fails every comparison
 *   with a non-null literal (SQL NULL semantics). eq(f, null) / neq(f, null) test absence / presence.
 * - Time fields compare as instants (ISO strings, naive ones read as UTC, or epoch ms); latency is
 *   (end_time - start_time) in seconds and literals are seconds or durations ("2s", "500ms", "1.5m").
 *   Numeric fields accept numbers or numeric strings (costs are often decimal strings).
 * - metadata/input/output values compare as stringified scalars for eq/in; ordering is numeric for a
 *   number literal and lexicographic for a string literal.
 * - Pairing: inside one and(...), direct-child *_key and *_value conditions of the same family must hold
 *   on the SAME entry (key conditions on the key, value conditions on that entry's leaves). exists() and
 *   conditions nested in or/not/inner and are not paired.
 * - search("x") is a case-insensitive substring over name, error and JSON of inputs/outputs (plus their
 *   string leaves, so quotes need no JSON escaping); search(field, "x") is the same over one field.
 * - like is SQL LIKE (case-sensitive; ilike is not); exists(f, b) is "has at least one candidate" === b.
 * - is_root falls back to parent_run_id being null when the run lacks a boolean is_root.
 */
import {
  type CmpNode,
  type FieldKind,
  type FieldName,
  type FilterableRun,
  type FilterNode,
  fieldKind,
  type PairFamily,
  pairFamily,
  type Scalar,
} from "./ast.ts";
import {
  likeMatch,
  objectEntries,
  parseDuration,
  parseInstant,
  safeJson,
  scalarLeaves,
  toNumber,
  toText,
} from "./values.ts";

/** Never throws: anything unexpected in the run (hostile getters, proxies) counts as "no match". */
export function evaluateFilter(node: FilterNode, run: FilterableRun): boolean {
  try {
    return matchNode(node, run);
  } catch {
    return false;
  }
}

/** The evaluator without the safety net; exported so fuzz tests can check it is total on its own. */
export function matchNode(node: FilterNode, run: unknown): boolean {
  switch (node.kind) {
    case "and":
      return matchAnd(node.children, run);
    case "or":
      return node.children.some((child) => matchNode(child, run));
    case "not":
      return !matchNode(node.child, run);
    case "cmp":
      return node.field === null
        ? searchRun(run, node.value)
        : matchValues(node, candidates(node.field, run));
  }
}

function get(obj: unknown, key: string): unknown {
  return obj !== null && typeof obj === "object" ? (obj as Record<string, unknown>)[key] : undefined;
}

function familySource(family: PairFamily, run: unknown): unknown {
  if (family === "metadata") return get(get(run, "extra"), "metadata");
  return get(run, family === "input" ? "inputs" : "outputs");
}

function candidates(field: FieldName, run: unknown): unknown[] {
  const kind = fieldKind(field);
  const family = pairFamily(field);
  if (family) {
    const source = familySource(family, run);
    return kind === "pairKey" ? objectEntries(source).map(([key]) => key) : scalarLeaves(source);
  }
  if (kind === "tags") {
    const tags = get(run, "tags");
    return Array.isArray(tags) ? tags.filter((tag) => tag !== null && tag !== undefined) : [];
  }
  if (kind === "latency") {
    const seconds = (parseInstant(get(run, "end_time")) - parseInstant(get(run, "start_time"))) / 1000;
    return Number.isNaN(seconds) ? [] : [seconds];
  }
  if (kind === "bool") {
    const isRoot = get(run, "is_root");
    if (typeof isRoot === "boolean") return [isRoot];
    const parent = get(run, "parent_run_id");
    return [parent === null || parent === undefined];
  }
  const value = get(run, field);
  return value === null || value === undefined ? [] : [value];
}

const MULTI_KINDS = new Set<FieldKind>(["tags", "pairKey", "pairValue"]);

function matchValues(node: CmpNode, values: unknown[]): boolean {
  const kind = fieldKind(node.field as FieldName);
  const lit = node.value;
  const anyEquals = (item: Scalar) =>
    item === null ? values.length === 0 : values.some((v) => equals(kind, v, item));
  switch (node.op) {
    case "exists":
      return values.length > 0 === (lit === true);
    case "eq":
    case "has":
      return !Array.isArray(lit) && anyEquals(lit);
    case "neq":
      if (Array.isArray(lit)) return false;
      if (lit === null) return values.length > 0;
      return (MULTI_KINDS.has(kind) || values.length > 0) && !anyEquals(lit);
    case "in":
      return Array.isArray(lit) && lit.some(anyEquals);
    case "like":
    case "ilike": {
      const pattern = toText(lit);
      return values.some((v) => likeMatch(toText(v), pattern, node.op === "ilike"));
    }
    case "search": {
      const needle = toText(lit).toLowerCase();
      return values.some((v) => toText(v).toLowerCase().includes(needle));
    }
    default: {
      const op = node.op;
      return values.some((v) => {
        const c = compare(kind, v, lit);
        if (Number.isNaN(c)) return false;
        return op === "gt" ? c > 0 : op === "gte" ? c >= 0 : op === "lt" ? c < 0 : c <= 0;
      });
    }
  }
}

function equals(kind: FieldKind, actual: unknown, lit: Scalar): boolean {
  switch (kind) {
    case "bool":
      return actual === lit;
    case "time":
    case "latency":
    case "number":
      return compare(kind, actual, lit) === 0;
    default:
      return typeof actual !== "object" && toText(actual) === toText(lit);
  }
}

/** Sign of actual - lit, or NaN when the two cannot be ordered. */
function compare(kind: FieldKind, actual: unknown, lit: unknown): number {
  let a: number;
  let b: number;
  if (kind === "time") [a, b] = [parseInstant(actual), parseInstant(lit)];
  else if (kind === "latency") [a, b] = [toNumber(actual), parseDuration(lit)];
  else if (kind === "number" || typeof lit === "number") [a, b] = [toNumber(actual), toNumber(lit)];
  else if (typeof lit === "string" && kind !== "bool" && kind !== "tags") {
    const text = toText(actual);
    return text === lit ? 0 : text > lit ? 1 : -1;
  } else return Number.NaN;
  return Number.isNaN(a) || Number.isNaN(b) ? Number.NaN : Math.sign(a - b);
}

function matchAnd(children: FilterNode[], run: unknown): boolean {
  const groups = new Map<PairFamily, { keys: CmpNode[]; values: CmpNode[] }>();
  const rest: FilterNode[] = [];
  for (const child of children) {
    const family =
      child.kind === "cmp" && child.field && child.op !== "exists" ? pairFamily(child.field) : null;
    if (child.kind !== "cmp" || !family) {
      rest.push(child);
      continue;
    }
    const group = groups.get(family) ?? { keys: [], values: [] };
    groups.set(family, group);
    (fieldKind(child.field as FieldName) === "pairKey" ? group.keys : group.values).push(child);
  }
  for (const [family, { keys, values }] of groups) {
    if (keys.length === 0 || values.length === 0) {
      rest.push(...keys, ...values);
      continue;
    }
    const paired = objectEntries(familySource(family, run)).some(
      ([key, value]) =>
        keys.every((n) => matchValues(n, [key])) && values.every((n) => matchValues(n, scalarLeaves(value))),
    );
    if (!paired) return false;
  }
  return rest.every((child) => matchNode(child, run));
}

const SEARCH_FIELDS = ["name", "error", "inputs", "outputs"];

function searchRun(run: unknown, lit: unknown): boolean {
  const needle = toText(lit).toLowerCase();
  const hit = (text: string) => text.toLowerCase().includes(needle);
  return SEARCH_FIELDS.some((key) => {
    const value = get(run, key);
    if (value === null || value === undefined) return false;
    if (typeof value !== "object") return hit(toText(value));
    return hit(safeJson(value)) || scalarLeaves(value).some((leaf) => hit(toText(leaf)));
  });
}
