// Public API of the run filter language (LangSmith-compatible): parse, evaluate, print, push down.
import type { FilterableRun } from "./ast.ts";
import { evaluateFilter } from "./evaluate.ts";
import { parseFilter } from "./parser.ts";

export type {
  AndNode,
  CmpNode,
  Comparator,
  FieldName,
  FilterableRun,
  FilterNode,
  Literal,
  NotNode,
  OrNode,
  Scalar,
} from "./ast.ts";
export { COMPARATORS, FIELDS } from "./ast.ts";
export { evaluateFilter } from "./evaluate.ts";
export { MAX_FILTER_LENGTH, MAX_NESTING_DEPTH, parseFilter } from "./parser.ts";
export { printFilter } from "./print.ts";
export { type Pushdown, pushdown } from "./pushdown.ts";

/** Parses once and returns a predicate; throws FilterParseError for invalid text. */
export function compileFilter(text: string): (run: FilterableRun) => boolean {
  const node = parseFilter(text);
  return (run) => evaluateFilter(node, run);
}
