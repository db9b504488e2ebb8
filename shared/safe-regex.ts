import { setFlagsFromString } from "node:v8";

// Regexes that come from users (price-map `match_pattern`, langgraph.json `http.cors.allow_origin_regex`) run on
// hot paths. V8's backtracking engine can take exponential or high-polynomial time on some of them (`(a+)+$`,
// `.*-.*-.*x`), which would hang the process. Node's V8 ships a linear-time engine: with this flag a regex falls
// back to it once it has backtracked too much, so a match costs O(pattern × input) at worst while ordinary
// matches keep the fast engine. It only covers regexes the linear engine can run (no backreferences, no
// lookaround), so those are refused; so are the classic exponential shapes, with a message saying why, and
// overlong patterns. Callers cap the input's length too.
setFlagsFromString("--enable-experimental-regexp-engine");
setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
// Per match attempt (V8's default is 50,000): with a few hundred attempts per test (capped inputs), 1,000 keeps the
// backtracking a pattern may do before the fallback under a millisecond or so. Results are the same either way.
setFlagsFromString("--regexp-backtracks-before-fallback=1000");

/** Longest pattern accepted. */
export const MAX_PATTERN_LENGTH = 1000;

/** The flag compiling a regex for the linear engine only (a variable: TypeScript's parser rejects a literal `/a/l`). */
const LINEAR = "l";

/** Whether this V8 honours the flags above (the `l` flag compiles only then); a unit test requires it. */
export const LINEAR_FALLBACK = (() => {
  try {
    new RegExp("a", LINEAR);
    return true;
  } catch {
    return false;
  }
})();

interface Group {
  quantified: boolean;
  alternation: boolean;
}

const BRACES = /^\{(\d+)(,(\d*))?\}/;

/** A repeated group holding a quantifier or an alternation: the shapes that backtrack exponentially. */
function exponentialShape(pattern: string, subject: string): string | undefined {
  const stack: Group[] = [{ quantified: false, alternation: false }];
  let last: { group?: Group } | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const top = stack[stack.length - 1];
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      const close = /[pPu]/.test(next) && pattern[i + 2] === "{" ? pattern.indexOf("}", i) : -1;
      i = close > 0 ? close : i + 1;
      last = {};
    } else if (c === "[") {
      let j = i + 1;
      if (pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      i = j;
      last = {};
    } else if (c === "(") {
      stack.push({ quantified: false, alternation: false });
      last = undefined;
    } else if (c === ")") {
      const group = stack.length > 1 ? stack.pop()! : top;
      const parent = stack[stack.length - 1];
      parent.quantified ||= group.quantified;
      parent.alternation ||= group.alternation;
      last = { group };
    } else if (c === "|") {
      top.alternation = true;
      last = undefined;
    } else {
      const braces = c === "{" ? BRACES.exec(pattern.slice(i)) : null;
      if (!(c === "*" || c === "+" || c === "?" || braces)) {
        last = {};
        continue;
      }
      if (!last) continue; // `(?:`, `(?<name>`: not a quantifier here
      const max = braces
        ? braces[2] === undefined
          ? Number(braces[1])
          : braces[3]
            ? Number(braces[3])
            : Number.POSITIVE_INFINITY
        : c === "?"
          ? 1
          : Number.POSITIVE_INFINITY;
      if (braces) i += braces[0].length - 1;
      if (max > 1 && last.group?.quantified)
        return `${subject} may not repeat a group that holds a quantifier, like (a+)+ (nested quantifiers can take exponential time)`;
      if (max > 1 && last.group?.alternation)
        return `${subject} may not repeat a group that holds an alternation, like (a|ab)* (it can take exponential time)`;
      top.quantified = true;
      last = undefined; // a lazy `?` after a quantifier is not one more
    }
  }
  return undefined;
}

/**
 * Why `pattern` may not be used as a user's regex (it compiles: the caller checks that first), or undefined when
 * it may; `subject` names it in the message (`match_pattern`, `the regex`).
 */
export function unsafePatternReason(pattern: string, subject: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH)
    return `${subject} is longer than ${MAX_PATTERN_LENGTH} characters`;
  const shape = exponentialShape(pattern, subject);
  if (shape) return shape;
  if (/\\[1-9]|\\k</.test(pattern.replace(/\\\\/g, "")))
    return `${subject} may not use backreferences (they can take exponential time)`;
  if (LINEAR_FALLBACK) {
    try {
      new RegExp(pattern, LINEAR);
    } catch {
      return `${subject} may not use backreferences or lookaround assertions ((?=, (?!, (?<=, (?<!): they keep a match from running in linear time`;
    }
  }
  return undefined;
}

/** Why `pattern` is no usable user regex (too long, does not compile, or unsafe as above), or undefined. */
export function regexProblem(pattern: string, subject: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH)
    return `${subject} is longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern);
  } catch {
    return "Invalid regular expression";
  }
  return unsafePatternReason(pattern, subject);
}

/** `pattern` compiled, or null when it is no usable user regex (stored before a rule, or written around the API). */
export function safeRegex(pattern: string): RegExp | null {
  return regexProblem(pattern, "pattern") ? null : new RegExp(pattern);
}
